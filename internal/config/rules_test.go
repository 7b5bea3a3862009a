package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

func TestABadRuleListNamesEveryBadEntry(t *testing.T) {
	_, err := Load(write(t, `
hap:
  rule:
    - aws
    - aws(PR=cf-eu11) -> EU
    - aws
    - aws(XR=eu)
    - gcp(PR=) -> S
`))
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("want a configuration error (exit 2), got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"hap.rule[2]", `"aws"`, "hap.rule[3]", "XR", "hap.rule[4]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not name %s:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "hap.rule[1]") {
		t.Errorf("a good entry is named:\n%s", msg)
	}
	if n := strings.Count(msg, "\n  "); n != 3 {
		t.Errorf("want one line per bad entry (3), got %d:\n%s", n, msg)
	}
}

func TestRulesComeFromKEBsRuleFileWhenTheConfigurationHasNone(t *testing.T) {
	ruleFile := filepath.Join(t.TempDir(), "hap-rules.yaml")
	if err := os.WriteFile(ruleFile, []byte("rule:\n  - aws\n  - gcp(PR=cf-sa30) -> PR\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{ruleFileEnv: ruleFile}
	cfg, err := loadWithEnv(t, write(t, "namespace: x\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	rs := cfg.Rules()
	if got, ok := rs.Match("gcp", "cf-sa30", "me-central2"); !ok || got.Pool.HyperscalerType != "gcp_cf-sa30" {
		t.Fatalf("rules from %s: %+v, %v", ruleFile, got, ok)
	}
	cfg, err = loadWithEnv(t, write(t, "hap:\n  rule: [azure]\n"), env)
	if err != nil || len(cfg.HAP.Rule) != 1 || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Reason, ruleFileEnv) {
		t.Fatalf("both given and different: rules %v, warnings %+v, %v", cfg.HAP.Rule, cfg.Warnings, err)
	}
	if _, err := loadWithEnv(t, "", map[string]string{ruleFileEnv: filepath.Join(t.TempDir(), "missing.yaml")}); err == nil || !strings.Contains(err.Error(), ruleFileEnv) {
		t.Fatalf("a missing rule file: %v", err)
	}
}

// Entries KEB accepts but the job cannot follow fully are warnings at start,
// each naming the entry; the list still applies.
func TestRuleWarningsAtStart(t *testing.T) {
	cfg, err := Load(write(t, `
hap:
  rule:
    - aws
    - newplan -> S
    - sap-converged-cloud(HR=*) -> S
`))
	if err != nil {
		t.Fatalf("a plan newer than the job's table must not stop it: %v", err)
	}
	want := map[string][]string{
		"hap.rule[1]": {`"newplan -> S"`, `plan "newplan"`, rules.PlanTableSource},
		"hap.rule[2]": {`"sap-converged-cloud(HR=*) -> S"`, "HR=*", "literally", "no real runtime"},
	}
	if len(cfg.Warnings) != len(want) {
		t.Fatalf("warnings %v, want one for each of %v", cfg.Warnings, want)
	}
	for _, w := range cfg.Warnings {
		for _, say := range want[w.Key] {
			if !strings.Contains(w.String(), say) {
				t.Errorf("warning %s does not say %s", w, say)
			}
		}
		if want[w.Key] == nil {
			t.Errorf("unexpected warning %s", w)
		}
	}
}

// KEB's default trial provider comes from KEB's variable, read as KEB's
// envconfig reads it; a value KEB's trial switch lacks is a warning and
// leaves a trial request without a provider on no pool, as in KEB.
func TestDefaultTrialProviderFromKEBsVariable(t *testing.T) {
	path := write(t, "hap:\n  rule: [trial -> S]\n")
	cases := []struct {
		env  map[string]string
		want string // "" = no pool
		warn bool
	}{
		{nil, "azure", false},
		{map[string]string{"APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER": "GCP"}, "gcp", false},
		{map[string]string{"app_infrastructuremanager_defaulttrialprovider": "AWS"}, "aws", false},
		{map[string]string{"APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER": "aws"}, "", true},
	}
	for _, tc := range cases {
		cfg, err := loadWithEnv(t, path, tc.env)
		if err != nil {
			t.Fatal(err)
		}
		if warned := len(cfg.Warnings) == 1 && strings.Contains(cfg.Warnings[0].Reason, "KEB fails every trial provisioning"); warned != tc.warn {
			t.Errorf("%v: warnings %v", tc.env, cfg.Warnings)
		}
		rs := cfg.Rules()
		got, ok := rs.Match("trial", "cf-eu10", "eu-central-1")
		if ok != (tc.want != "") || got.Pool.HyperscalerType != tc.want {
			t.Errorf("%v: trial lands in %q (%v), want %q", tc.env, got.Pool.HyperscalerType, ok, tc.want)
		}
	}
}
