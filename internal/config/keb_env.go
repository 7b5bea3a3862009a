package config

import (
	"fmt"

	"github.com/vrischmann/envconfig"
)

// kebPrefix is the prefix KEB's cmd/broker main reads its Config under
// (envconfig.InitWithPrefix(&cfg, "APP")).
const kebPrefix = "APP"

// kebConfig is the part of KEB's cmd/broker Config the job reads, declared
// with KEB's field names, nesting and envconfig tags (cmd/broker/main.go
// Config; common/hyperscaler/multiaccount MultiAccountConfig and
// HyperscalerAccountLimits; internal/broker InfrastructureManager), so that
// envconfig, at the version KEB pins, reads the variables KEB reads, in
// KEB's order of precedence, with KEB's defaults and list splitting. Only
// the number fields differ in type: kebNumber keeps the text, so that a bad
// one is refused naming its variable; it is parsed as envconfig parses an
// int.
type kebConfig struct {
	HapMultiHyperscalerAccount struct {
		AllowedGlobalAccounts []string
		Limits                struct {
			Default   kebNumber `envconfig:"default=999999"`
			AWS       kebNumber `envconfig:"optional"`
			GCP       kebNumber `envconfig:"optional"`
			Azure     kebNumber `envconfig:"optional"`
			OpenStack kebNumber `envconfig:"optional"`
			AliCloud  kebNumber `envconfig:"optional"`
		}
		MinBindingsForGuard kebNumber `envconfig:"default=0"`
	} `envconfig:"optional"`
	InfrastructureManager struct {
		DefaultTrialProvider string `envconfig:"default=Azure"`
	}
	// KEB requires it; the job works without rules, and takes them from
	// the configuration file when it has them.
	HapRuleFilePath string `envconfig:"optional"`
}

// kebNumber is the text of one of KEB's int fields as envconfig read it.
type kebNumber struct{ text string }

// Unmarshal implements envconfig.Unmarshaler.
func (n *kebNumber) Unmarshal(s string) error {
	n.text = s
	return nil
}

// readKEBConfig reads kebConfig from the process environment with
// envconfig, as KEB does.
func readKEBConfig() (kebConfig, error) {
	var c kebConfig
	if err := envconfig.InitWithPrefix(&c, kebPrefix); err != nil {
		return c, fmt.Errorf("KEB's variables, read as KEB reads them: %w", err)
	}
	return c, nil
}

// number is the text of one of KEB's number fields under
// HapMultiHyperscalerAccount, by its dotted name (kebEnvFields).
func (c kebConfig) number(field string) string {
	m := c.HapMultiHyperscalerAccount
	return map[string]kebNumber{
		fieldLimitsDefault:       m.Limits.Default,
		fieldLimitsAWS:           m.Limits.AWS,
		fieldLimitsGCP:           m.Limits.GCP,
		fieldLimitsAzure:         m.Limits.Azure,
		fieldLimitsOpenStack:     m.Limits.OpenStack,
		fieldLimitsAliCloud:      m.Limits.AliCloud,
		fieldMinBindingsForGuard: m.MinBindingsForGuard,
	}[field].text
}
