package config

import "github.com/kyma-project/hap-reconciler/internal/setting"

// Duration is a time.Duration written as "90s", "1h" or "1h30m"
// (setting.Duration, shared with the jobs' own settings).
type Duration = setting.Duration

// Error is a configuration error naming the key and the offending value
// (setting.Error, shared with the jobs' checks of their own sections). The
// CLI exits with status 2 on it.
type Error = setting.Error

var (
	invalid = setting.Invalid
	quote   = setting.Quote
)
