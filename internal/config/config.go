// Package config reads the job's YAML configuration: KEB's `hap` values
// block, verbatim, plus the job's own settings. KEB's multi-account settings
// may come from KEB's environment variables instead of the file.
package config

import (
	"fmt"
	"maps"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// Config is the whole configuration file.
type Config struct {
	HAP       HAPValues `json:"hap"`
	Namespace string    `json:"namespace"`
	Gardener  Gardener  `json:"gardener"`
	Database  Database  `json:"database"`
	Metrics   Metrics   `json:"metrics"`
	KEBModule KEBModule `json:"kebModule"`

	// Jobs holds what the jobs apply: the jobs' sections of the file
	// (schedules, retention and each job's own, jobs.Setup), read with
	// the rest of the file by Parse, and KEB's policy and rules, resolved
	// once by Resolve.
	Jobs jobs.Setup `json:"-"`

	// Warnings are the settings the job accepted but, like KEB, does not
	// apply as written. The commands log each once at start.
	Warnings []Warning `json:"-"`
	// PolicySource says where hap.multiHyperscalerAccount came from: "file"
	// (with the path once loaded by Load), "environment" (with the
	// variables read), or "" when neither sets it and the feature is off.
	PolicySource string `json:"-"`
	// RuleSource names the file hap.rule was read from when it came from
	// KEB's rule file (APP_HAP_RULE_FILE_PATH); "" for the configuration.
	RuleSource string `json:"-"`
	// Providers holds KEB's default trial provider, from KEB's variable
	// (TrialProviderEnv) when set, else KEB's default.
	Providers rules.Providers `json:"-"`

	// resolved says that Jobs.KEB and the checks follow the settings as
	// they are: set by Default and Resolve, cleared by Parse.
	resolved bool
}

// Resolved reports whether the configuration was resolved since it was
// last parsed (Default is resolved). Changing HAP or a job's settings by
// hand after that needs Resolve again, which nothing can detect.
func (c Config) Resolved() bool { return c.resolved }

// Warning is a setting the job accepts without applying it as written: a key
// KEB does not have, a limit KEB as deployed does not read, an allowlist
// entry that matches no global account.
type Warning struct {
	// Key is the setting's full path in the file, or the environment
	// variable.
	Key string
	// Value is the value as written, quoted like in configuration errors.
	Value  string
	Reason string
}

func (w Warning) String() string {
	return fmt.Sprintf("%s = %s: %s", w.Key, w.Value, w.Reason)
}

// HAPValues mirrors KEB's `hap` values block, so KEB's own values can be reused as
// they are. Rule is KEB's rule list: validated as KEB validates it (a list
// KEB refuses is a configuration error, Config.RuleSet) and evaluated for
// the pools it names: the pool view and its metrics, `pools --plan` and the
// pool_not_in_rules finding. The candidate table does not depend on it: it
// ranks every pool bindings exist for.
type HAPValues struct {
	Rule                    []string      `json:"rule"`
	MultiHyperscalerAccount *MultiAccount `json:"multiHyperscalerAccount"`
}

// MultiAccount holds the values KEB applies from its multi-account
// settings (MultiAccountConfig in KEB's common/hyperscaler/multiaccount).
type MultiAccount struct {
	AllowedGlobalAccounts []string `json:"allowedGlobalAccounts"`
	MinBindingsForGuard   int      `json:"minBindingsForGuard"`
	Limits                Limits   `json:"limits"`
}

// Limits are the limits KEB applies: Default (hap.NoLimit when not set, as
// KEB's envconfig default) and the providers' own limits, keyed by KEB's
// field names (hap.LimitProviders). A provider missing from Providers, or
// set to 0, gets Default.
type Limits struct {
	Default   int            `json:"default"`
	Providers map[string]int `json:"providers"`
}

// Gardener settings.
type Gardener struct {
	PageSize       int64    `json:"pageSize"`
	RequestTimeout Duration `json:"requestTimeout"`
}

// Database settings. The URL itself comes from flags or the environment,
// never from this file, so the file can live in a ConfigMap.
type Database struct {
	Schema           string   `json:"schema"`
	ConnectTimeout   Duration `json:"connectTimeout"`
	StatementTimeout Duration `json:"statementTimeout"`
}

// KEBModule says which versions of the job's schema the provisioning module
// KEB pins reads: schema.Oldest and SchemaNewest of that
// release of the module. The job cannot see KEB's binary; the pin is set in
// KEB's go.mod with a KEB release, and whoever raises it states its range
// here, beside KEB's values. The defaults are the module of this release.
// migrate refuses a schema past SchemaNewest, and the job reports a schema
// outside the range (check, hap_reconciler_keb_module_reads_schema).
type KEBModule struct {
	SchemaOldest int `json:"schemaOldest"`
	SchemaNewest int `json:"schemaNewest"`
}

// Reads is the range as the module states it.
func (k KEBModule) Reads() schema.Range {
	return schema.Range{Oldest: k.SchemaOldest, Newest: k.SchemaNewest}
}

// Metrics settings.
type Metrics struct {
	PushgatewayURL string `json:"pushgatewayURL"`
	Listen         string `json:"listen"`
}

// Default returns the configuration used for every key the file leaves out,
// resolved: every job's defaults, KEB's policy with nothing set, no rules.
func Default() Config {
	cfg := Config{
		Gardener:  Gardener{PageSize: 500, RequestTimeout: Duration{Duration: 30 * time.Second}},
		Database:  Database{Schema: schema.Default, ConnectTimeout: Duration{Duration: 10 * time.Second}, StatementTimeout: Duration{Duration: 60 * time.Second}},
		Metrics:   Metrics{Listen: ":8080"},
		KEBModule: KEBModule{SchemaOldest: schema.Oldest, SchemaNewest: schema.Newest},
		Jobs:      jobs.NewSetup(),
		Providers: rules.DefaultProviders(),
	}
	cfg.Jobs.KEB = jobs.KEB{Policy: policyOf(cfg.HAP)}
	cfg.resolved = true
	return cfg
}

// Policy returns KEB's multi-account policy as Resolve resolved it.
func (c Config) Policy() hap.Policy { return c.Jobs.KEB.Policy }

// Rules returns KEB's rules as Resolve parsed them.
func (c Config) Rules() rules.RuleSet { return c.Jobs.KEB.Rules }

// policyOf returns the decisions' view of KEB's multi-account settings, with
// the values KEB applies. A missing block or an empty allowlist turns the
// feature off; with nothing set KEB's default limit is hap.NoLimit.
func policyOf(h HAPValues) hap.Policy {
	m := h.MultiHyperscalerAccount
	if m == nil {
		return hap.Policy{DefaultLimit: hap.NoLimit}
	}
	p := hap.Policy{
		Allowed:             map[string]bool{},
		DefaultLimit:        m.Limits.Default,
		ProviderLimits:      maps.Clone(m.Limits.Providers),
		MinBindingsForGuard: m.MinBindingsForGuard,
	}
	for _, ga := range m.AllowedGlobalAccounts {
		if ga == "*" {
			p.AllowAll = true
		}
		p.Allowed[ga] = true
	}
	return p
}
