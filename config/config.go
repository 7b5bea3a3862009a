// Package config reads the job's YAML configuration: KEB's
// hap.multiHyperscalerAccount block, verbatim, plus the job's own settings.
package config

import (
	"time"

	"github.com/kyma-project/hap-reconciler/hap"
)

// Config is the whole configuration file.
type Config struct {
	HAP        HAP        `json:"hap"`
	Namespace  string     `json:"namespace"`
	Gardener   Gardener   `json:"gardener"`
	Database   Database   `json:"database"`
	Schedules  Schedules  `json:"schedules"`
	Candidates Candidates `json:"candidates"`
	Release    Release    `json:"release"`
	Metrics    Metrics    `json:"metrics"`
}

// HAP mirrors KEB's `hap` block. Rule is accepted, so KEB's own values can be
// reused as they are, but the job does not evaluate it.
type HAP struct {
	Rule                    []string      `json:"rule"`
	MultiHyperscalerAccount *MultiAccount `json:"multiHyperscalerAccount"`
}

// MultiAccount is KEB's hap.multiHyperscalerAccount block.
type MultiAccount struct {
	AllowedGlobalAccounts []string `json:"allowedGlobalAccounts"`
	Limits                Limits   `json:"limits"`
}

// Limits is `default` plus per-provider overrides, keyed by canonical
// provider name once loaded.
type Limits struct {
	Default   int
	Providers map[string]int
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

// Schedules are standard 5-field cron expressions (or @every/@hourly...) used
// by `serve`.
type Schedules struct {
	Drift      string `json:"drift"`
	Candidates string `json:"candidates"`
	Release    string `json:"release"`
	Metrics    string `json:"metrics"`
}

// Candidates settings.
type Candidates struct {
	// ReservationTTL drops a reservation whose instance never showed up in
	// KEB's database with the reserved binding (failed provisioning).
	ReservationTTL Duration `json:"reservationTTL"`
}

// Release settings.
type Release struct {
	Enabled     bool     `json:"enabled"`
	Mode        string   `json:"mode"`
	GracePeriod Duration `json:"gracePeriod"`
	MaxPerRun   int      `json:"maxPerRun"`
	GuardRatio  float64  `json:"guardRatio"`
}

// Release modes.
const (
	// ReleaseDirty hands the account to the account-cleanup process.
	ReleaseDirty = "dirty"
	// ReleaseUnclaim puts the account straight back into the pool.
	ReleaseUnclaim = "unclaim"
)

// Metrics settings.
type Metrics struct {
	PushgatewayURL string `json:"pushgatewayURL"`
	Listen         string `json:"listen"`
}

// Default returns the configuration used for every key the file leaves out.
func Default() Config {
	return Config{
		Gardener: Gardener{PageSize: 500, RequestTimeout: Duration{30 * time.Second}},
		Database: Database{Schema: "hap", ConnectTimeout: Duration{10 * time.Second}, StatementTimeout: Duration{60 * time.Second}},
		Schedules: Schedules{
			Drift:      "*/10 * * * *",
			Candidates: "*/5 * * * *",
			Release:    "15 * * * *",
			Metrics:    "*/5 * * * *",
		},
		Candidates: Candidates{ReservationTTL: Duration{time.Hour}},
		Release: Release{
			Enabled:     true,
			Mode:        ReleaseDirty,
			GracePeriod: Duration{time.Hour},
			MaxPerRun:   10,
			GuardRatio:  0.5,
		},
		Metrics: Metrics{Listen: ":8080"},
	}
}

// Policy returns the decisions' view of hap.multiHyperscalerAccount. A
// missing block or an empty allowlist turns the feature off.
func (c Config) Policy() hap.Policy {
	m := c.HAP.MultiHyperscalerAccount
	if m == nil {
		return hap.Policy{}
	}
	p := hap.Policy{Allowed: map[string]bool{}, DefaultLimit: m.Limits.Default, ProviderLimits: m.Limits.Providers}
	for _, ga := range m.AllowedGlobalAccounts {
		if ga == "*" {
			p.AllowAll = true
		}
		p.Allowed[ga] = true
	}
	return p
}

// ReleaseRules returns the decisions' view of the release settings.
func (c Config) ReleaseRules() hap.ReleaseRules {
	return hap.ReleaseRules{
		GracePeriod: c.Release.GracePeriod.Duration,
		MaxPerRun:   c.Release.MaxPerRun,
		GuardRatio:  c.Release.GuardRatio,
	}
}
