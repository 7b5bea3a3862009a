package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

func write(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadsTheADRBlockVerbatim(t *testing.T) {
	cfg, err := Load(write(t, `
hap:
  rule:
  - aws
  - aws(PR=cf-eu11) -> EU
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits:
      default: 3
      aws: 180
      gcp: 135
      openstack: 100
      alicloud: 100
release:
  gracePeriod: 2h
`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy()
	// openstack and alicloud are KEB's keys, but KEB as deployed does not
	// apply them (its chart sets variables envconfig never reads): both
	// providers get the default, with a warning each.
	want := map[string]int{"aws": 180, "gcp": 135, "azure": 3, "openstack": 3, "alicloud": 3}
	for provider, limit := range want {
		if got := p.LimitForProvider(provider); got != limit {
			t.Errorf("limit of %s: %d, want %d", provider, got, limit)
		}
	}
	if !p.AllowAll || !p.MultiAccount("any-ga") || p.DefaultLimit != 3 {
		t.Fatalf("policy %+v", p)
	}
	if got := warningKeys(cfg.Warnings); !slices.Equal(got, []string{limitsKey + ".alicloud", limitsKey + ".openstack"}) {
		t.Errorf("warnings %v", cfg.Warnings)
	}
	release := cfg.Jobs.Release
	if release.GracePeriod.Duration != 2*time.Hour || release.MaxPerRun != 10 || cfg.Gardener.PageSize != 500 {
		t.Fatalf("defaults not kept under the file: %+v", cfg)
	}
}

func TestFeatureOffWhenBlockMissingOrListEmpty(t *testing.T) {
	for _, doc := range []string{"", "namespace: x\n", "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: []\n"} {
		cfg, err := Load(write(t, doc))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if cfg.Policy().MultiAccount("ga") {
			t.Fatalf("%q: feature must be off", doc)
		}
	}
	cfg, err := Load(write(t, "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [ga-1]\n    limits: {default: 5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Policy(); !p.MultiAccount("ga-1") || p.MultiAccount("ga-2") {
		t.Fatalf("allowlist: %+v", p)
	}
}

// KEB's chart passes limits.aws, limits.gcp, ... under fixed variable names;
// a key spelled otherwise (AWS, sap-converged-cloud) reaches no variable, so
// KEB never sees it. The job warns and, like KEB, applies the default.
func TestProviderKeysOtherThanKEBsAreNotApplied(t *testing.T) {
	cfg, err := Load(write(t, "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: ['*']\n    limits: {default: 3, AWS: 7, sap-converged-cloud: 9}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Policy(); p.LimitForProvider("aws") != 3 || p.LimitForProvider("openstack") != 3 {
		t.Fatalf("limits %v", p.ProviderLimits)
	}
	if got := warningKeys(cfg.Warnings); !slices.Equal(got, []string{limitsKey + ".AWS", limitsKey + ".sap-converged-cloud"}) {
		t.Errorf("warnings %v", cfg.Warnings)
	}
}

func TestBadConfigurationNamesKeyAndValue(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"unknown top-level key", "nmespace: x\n", []string{"nmespace", "unknown key"}},
		{"unknown nested key", "release:\n  gracePeriode: 1h\n", []string{"release.gracePeriode", "unknown key"}},
		{"unknown key beside a hap block", "hap: {rule: [aws]}\nrelease:\n  gracePeriode: 1h\n", []string{"release.gracePeriode", "unknown key"}},
		{"negative limit", "hap:\n  multiHyperscalerAccount:\n    limits: {default: 3, aws: -1}\n", []string{"hap.multiHyperscalerAccount.limits.aws", "-1"}},
		{"non-numeric limit", "hap:\n  multiHyperscalerAccount:\n    limits: {default: 3, gcp: lots}\n", []string{"limits.gcp", `"lots"`}},
		{"fractional limit", "hap:\n  multiHyperscalerAccount:\n    limits: {default: 2.5}\n", []string{"limits.default", "2.5"}},
		{"negative limit KEB does not apply", "hap:\n  multiHyperscalerAccount:\n    limits: {openstack: -4}\n", []string{"limits.openstack", "-4"}},
		{"huge limit", "hap:\n  multiHyperscalerAccount:\n    limits: {azure: 1e12}\n", []string{"limits.azure", "1000000000000", "at most"}},
		{"limits not a mapping", "hap:\n  multiHyperscalerAccount:\n    limits: [3]\n", []string{"hap.multiHyperscalerAccount.limits", "mapping"}},
		{"negative guard", "hap:\n  multiHyperscalerAccount:\n    minBindingsForGuard: -1\n", []string{"hap.multiHyperscalerAccount.minBindingsForGuard", "-1"}},
		{"allowlist not a list", "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: ga-1\n", []string{"allowedGlobalAccounts", `"ga-1"`}},
		{"allowlist entry not a string", "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [[a]]\n", []string{"allowedGlobalAccounts[0]", `["a"]`}},
		{"rule not a list", "hap:\n  rule: aws\n", []string{"hap.rule", `"aws"`}},
		{"hap not a mapping", "hap: [a]\n", []string{"hap", "mapping"}},
		{"schedules not a mapping", "schedules: hourly\n", []string{"schedules", `"hourly"`, "mapping"}},
		{"no module version", "kebModule:\n  schemaOldest: 0\n", []string{"kebModule.schemaOldest", "0", "schema.Oldest"}},
		{"module range upside down", "kebModule:\n  schemaOldest: 12\n  schemaNewest: 11\n", []string{"kebModule.schemaNewest", "11", "kebModule.schemaOldest (12)"}},
		{"unknown retention key", "retention:\n  findings: 1h\n", []string{"retention.findings", "unknown key"}},
		{"no retention", "retention:\n  resolvedFindings: 0s\n", []string{"retention.resolvedFindings", "0s"}},
		{"retention not a duration", "retention:\n  releaseAudit: forever\n", []string{"retention.releaseAudit", `"forever"`, "duration"}},
		{"bad duration", "release:\n  gracePeriod: soon\n", []string{"release.gracePeriod", `"soon"`, "duration"}},
		{"wrong type", "release:\n  maxPerRun: ten\n", []string{"release.maxPerRun", `"ten"`, "integer"}},
		{"bad mode", "release:\n  mode: wipe\n", []string{"release.mode", `"wipe"`}},
		{"unclaim is gone", "release:\n  mode: unclaim\n", []string{"release.mode", `"unclaim"`, "no longer supported", "nobody had cleaned"}},
		{"bad schema", "database:\n  schema: 'hap; drop'\n", []string{"database.schema", `"hap; drop"`}},
		{"KEB's schema", "database:\n  schema: public\n", []string{"database.schema", `"public"`, "KEB's tables"}},
		{"PostgreSQL's catalog", "database:\n  schema: pg_catalog\n", []string{"database.schema", `"pg_catalog"`, "PostgreSQL reserves"}},
		{"PostgreSQL's information schema", "database:\n  schema: information_schema\n", []string{"database.schema", `"information_schema"`}},
		{"not a mapping", "- a\n- b\n", []string{"(file)", "mapping"}},
		{"not YAML", "a: [\n", []string{"not valid YAML"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(t, tc.doc))
			var cfgErr *Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("want a configuration error, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestUnreadableFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	var cfgErr *Error
	if !errors.As(err, &cfgErr) || !strings.Contains(err.Error(), "missing.yaml") || !strings.Contains(err.Error(), "cannot read") {
		t.Fatalf("got %v", err)
	}
}

func warningKeys(ws []Warning) []string {
	keys := make([]string, 0, len(ws))
	for _, w := range ws {
		keys = append(keys, w.Key)
	}
	return keys
}

// The jobs' sections are keys of the file the jobs read, beside the
// file's own: a key of both would reach neither, and the file would refuse
// it as unknown.
func TestEveryJobsSectionIsReadFromTheFile(t *testing.T) {
	js, err := json.Marshal(jobs.NewSetup())
	if err != nil {
		t.Fatal(err)
	}
	var sections map[string]any
	if err := json.Unmarshal(js, &sections); err != nil {
		t.Fatal(err)
	}
	for section := range sections {
		cfg := Default()
		if err := Parse([]byte(section+": {}\n"), &cfg); err != nil {
			t.Errorf("section %q of the jobs: %v", section, err)
		}
	}
}
