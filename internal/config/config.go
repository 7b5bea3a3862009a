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
	"github.com/kyma-project/hap-reconciler/provisioning"
)

// Config is the whole configuration file.
type Config struct {
	HAP        HAP        `json:"hap"`
	Namespace  string     `json:"namespace"`
	Gardener   Gardener   `json:"gardener"`
	Database   Database   `json:"database"`
	Schedules  Schedules  `json:"schedules"`
	Candidates Candidates `json:"candidates"`
	Shadow     Shadow     `json:"shadow"`
	Release    Release    `json:"release"`
	Metrics    Metrics    `json:"metrics"`

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
}

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

// HAP mirrors KEB's `hap` values block, so KEB's own values can be reused as
// they are. Rule is KEB's rule list: validated as KEB validates it (a list
// KEB refuses is a configuration error, Config.RuleSet) and evaluated for
// the pools it names: the pool view and its metrics, `pools --plan` and the
// pool_not_in_rules finding. The candidate table does not depend on it: it
// ranks every pool bindings exist for.
type HAP struct {
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

// Schedules are the cron schedules `serve` runs each job on, keyed by the
// job's name: standard 5-field expressions, or @every/@hourly... A job left
// out runs on its default schedule. The jobs' registry (jobs.Registry)
// knows the names and the defaults, and checks both.
type Schedules map[string]string

// Candidates settings.
type Candidates struct {
	// ReservationTTL drops a reservation whose instance never showed up in
	// KEB's database with the reserved binding (failed provisioning).
	ReservationTTL Duration `json:"reservationTTL"`
}

// Shadow settings: KEB's own picks compared with the candidate table's.
type Shadow struct {
	// Window is how far back picks are compared, kept and reported.
	Window Duration `json:"window"`
	// MaxAge is the MaxAge KEB passes to provisioning.NextBinding: a pick
	// made while the table was older counts as staleness, not as a
	// difference, since NextBinding would have refused and KEB chosen.
	MaxAge Duration `json:"maxAge"`
}

// Release settings.
type Release struct {
	Enabled     bool     `json:"enabled"`
	Mode        string   `json:"mode"`
	GracePeriod Duration `json:"gracePeriod"`
	MaxPerRun   int      `json:"maxPerRun"`
	GuardRatio  float64  `json:"guardRatio"`
}

// ReleaseDirty, the only release mode, labels the binding `dirty: "true"`
// and keeps `tenantName`, handing the account to the account-cleanup
// process, as KEB does when it frees a binding.
const ReleaseDirty = "dirty"

// Metrics settings.
type Metrics struct {
	PushgatewayURL string `json:"pushgatewayURL"`
	Listen         string `json:"listen"`
}

// Default returns the configuration used for every key the file leaves out.
func Default() Config {
	return Config{
		Gardener:   Gardener{PageSize: 500, RequestTimeout: Duration{30 * time.Second}},
		Database:   Database{Schema: provisioning.DefaultSchema, ConnectTimeout: Duration{10 * time.Second}, StatementTimeout: Duration{60 * time.Second}},
		Candidates: Candidates{ReservationTTL: Duration{time.Hour}},
		Shadow:     Shadow{Window: Duration{7 * 24 * time.Hour}, MaxAge: Duration{provisioning.DefaultMaxAge}},
		Release: Release{
			Enabled:     true,
			Mode:        ReleaseDirty,
			GracePeriod: Duration{time.Hour},
			MaxPerRun:   10,
			GuardRatio:  0.5,
		},
		Metrics:   Metrics{Listen: ":8080"},
		Providers: rules.DefaultProviders(),
	}
}

// Policy returns the decisions' view of KEB's multi-account settings, with
// the values KEB applies. A missing block or an empty allowlist turns the
// feature off; with nothing set KEB's default limit is hap.NoLimit.
func (c Config) Policy() hap.Policy {
	m := c.HAP.MultiHyperscalerAccount
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

// Rules returns the decisions' view of the release settings.
func (r Release) Rules() hap.ReleaseRules {
	return hap.ReleaseRules{
		GracePeriod: r.GracePeriod.Duration,
		MaxPerRun:   r.MaxPerRun,
		GuardRatio:  r.GuardRatio,
	}
}
