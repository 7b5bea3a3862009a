package app

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// PolicyMessage is the message of the start-up line that shows the
// multi-account policy the job applies.
const PolicyMessage = "multi-account policy in effect"

// LogConfig logs, once at start, each configuration warning at warn level
// and the multi-account policy the job applies at info level, as structured
// fields an operator can compare with KEB's values: the allowlist, every
// provider's limit after KEB's fallback (0 or not set: the default; a
// default of 0: no limit), the guard, and where the settings came from.
func LogConfig(log *zap.Logger, cfg config.Config) {
	LogWarnings(log, cfg)
	var allowed []string
	if m := cfg.HAP.MultiHyperscalerAccount; m != nil {
		allowed = m.AllowedGlobalAccounts
	}
	source := cfg.PolicySource
	if source == "" {
		source = "none: no hap.multiHyperscalerAccount in the file and no KEB variable for it in the environment"
	}
	p := cfg.Policy() // as resolved when the configuration was loaded
	limits := zapcore.ObjectMarshalerFunc(func(enc zapcore.ObjectEncoder) error {
		for _, provider := range append(append([]string{}, hap.LimitProviders...), "default") {
			enc.AddInt(provider, p.LimitForProvider(provider))
		}
		return nil
	})
	log.Info(PolicyMessage,
		zap.String("source", source),
		// KEB's IsGlobalAccountAllowed: on as soon as the list has an entry.
		zap.Bool("enabled", len(allowed) > 0),
		zap.Strings("allowedGlobalAccounts", allowed),
		zap.Object("limits", limits),
		zap.Int("minBindingsForGuard", p.MinBindingsForGuard))
}

// LogWarnings logs each configuration warning at warn level, without the
// policy: what a command that decides nothing (migrate) logs at start.
func LogWarnings(log *zap.Logger, cfg config.Config) {
	for _, w := range cfg.Warnings {
		log.Warn("configuration: "+w.String(), zap.String("key", w.Key), zap.String("value", w.Value))
	}
}
