package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestABadRuleListNamesEveryBadEntry(t *testing.T) {
	_, err := Load(write(t, `
hap:
  rule:
    - aws
    - aws(PR=cf-eu11) -> EU
    - aws
    - nosuchplan
    - gcp(PR=) -> S
`))
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("want a configuration error (exit 2), got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"hap.rule[2]", `"aws"`, "hap.rule[3]", "nosuchplan", "hap.rule[4]"} {
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
	env := func(k string) string {
		if k == RuleFileEnv {
			return ruleFile
		}
		return ""
	}
	cfg, err := LoadWithEnv(write(t, "namespace: x\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cfg.RuleSet()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := rs.Match("gcp", "cf-sa30", "me-central2"); !ok || got.Pool.HyperscalerType != "gcp_cf-sa30" {
		t.Fatalf("rules from %s: %+v, %v", ruleFile, got, ok)
	}
	cfg, err = LoadWithEnv(write(t, "hap:\n  rule: [azure]\n"), env)
	if err != nil || len(cfg.HAP.Rule) != 1 || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Reason, RuleFileEnv) {
		t.Fatalf("both given and different: rules %v, warnings %+v, %v", cfg.HAP.Rule, cfg.Warnings, err)
	}
	if _, err := LoadWithEnv("", func(k string) string {
		if k == RuleFileEnv {
			return filepath.Join(t.TempDir(), "missing.yaml")
		}
		return ""
	}); err == nil || !strings.Contains(err.Error(), RuleFileEnv) {
		t.Fatalf("a missing rule file: %v", err)
	}
}
