package config

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

// ruleFileEnv names the file KEB reads its rule list from; KEB's chart
// renders hap.rule into it as `rule: [...]`.
const ruleFileEnv = "APP_HAP_RULE_FILE_PATH"

// keyHapRule is KEB's rule list in KEB's values, the key its problems name.
const keyHapRule = "hap.rule"

// parseRules returns KEB's verdict on hap.rule: the rules KEB applies, or
// an error with one line per bad entry, naming the entry and the reason. No
// list at all is no error here (KEB would not start without one, but the
// job works without rules): the RuleSet then names no pool. Resolve is its
// one caller: the rules are parsed once.
func (c Config) parseRules() (rules.RuleSet, error) {
	if len(c.HAP.Rule) == 0 {
		return rules.RuleSet{}, nil
	}
	rs, problems := rules.ParseWith(c.HAP.Rule, rules.Options{Providers: c.Providers})
	if len(problems) == 0 {
		return rs, nil
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "  " + p.Error()
	}
	source := keyHapRule
	if c.RuleSource != "" {
		source = c.RuleSource
	}
	return rs, &Error{Key: source, Reason: fmt.Sprintf("KEB refuses %d of the entries:\n%s", len(problems), strings.Join(lines, "\n"))}
}

// ruleWarnings turns the entries KEB accepts but the job warns about (a plan
// outside its plan table, an input "*") into start-up warnings, each naming
// the entry by its index in hap.rule (or in KEB's rule file). It reads the
// rules Resolve parsed.
func (c Config) ruleWarnings() []Warning {
	rs := c.Jobs.KEB.Rules
	source := keyHapRule
	if c.RuleSource != "" {
		source = c.RuleSource + " rule"
	}
	var out []Warning
	for _, w := range rs.Warnings() {
		out = append(out, Warning{Key: fmt.Sprintf("%s[%d]", source, w.Index), Value: quote(w.Entry), Reason: w.Reason})
	}
	return out
}

// applyRuleFile reads the rule list from the file KEB reads when the
// configuration file has none; when both are given and differ, the file
// named by the configuration wins and a warning says so.
func applyRuleFile(cfg *Config, keb kebConfig) error {
	path := keb.HapRuleFilePath
	if path == "" {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return &Error{Key: ruleFileEnv, Value: fmt.Sprintf("%q", path), Reason: fmt.Sprintf("cannot read KEB's rule file (%v)", err)}
	}
	var doc struct {
		Rule []string `json:"rule"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return &Error{Key: ruleFileEnv, Value: fmt.Sprintf("%q", path), Reason: fmt.Sprintf("is not KEB's rule file, a YAML mapping with a list under rule (%v)", err)}
	}
	if len(cfg.HAP.Rule) > 0 {
		if !slices.Equal(cfg.HAP.Rule, doc.Rule) {
			cfg.Warnings = append(cfg.Warnings, Warning{Key: keyHapRule, Value: quote(path),
				Reason: fmt.Sprintf("differs from the rules in %s (%s); the configuration file's rules apply", path, ruleFileEnv)})
		}
		return nil
	}
	cfg.HAP.Rule = doc.Rule
	cfg.RuleSource = fmt.Sprintf("%s (%s)", path, ruleFileEnv)
	return nil
}
