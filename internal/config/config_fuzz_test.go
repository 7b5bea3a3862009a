package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary documents through what Load does after reading
// the file: Parse over the defaults, then Resolve. Whatever the input, it
// must not panic, and every refusal must be a *Error that names a key, so
// the CLI exits 2 with a message an operator can act on.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [\"*\"]\n    limits: {default: 3, aws: 180, AWS: 2}\n",
		"hap: {rule: [aws, 'aws(PR=cf-eu11) -> EU']}\nnamespace: garden-kyma\n",
		"gardener: {pageSize: 0, requestTimeout: 1x}\n",
		"database: {schema: \"Robert'); DROP TABLE instances;--\"}\n",
		"release: {mode: delete, gracePeriod: -1h, maxPerRun: 1e99, guardRatio: .nan}\n",
		"schedules: {drift: '61 * * * *'}\n",
		"metrics: {pushgatewayURL: '::'}\n",
		"- a\n- b\n",
		"hap: {multiHyperscalerAccount: {limits: {'': 1, default: 1.5}}}\n",
		"candidates: {reservationTTL: [1]}\nunknown: 1\n",
		"&a [*a, *a]\n",
		"{\"hap\": {\"multiHyperscalerAccount\": null}}",
		"hap:\n  future: [1]\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: ['', ' x']\n    minBindingsForGuard: 2\n    limits: {gdch: -1, openstack: 7, default: 0}\n",
		"hap: {multiHyperscalerAccount: {limits: [1], allowedGlobalAccounts: [[]]}, rule: [{a: b}]}\nrelease: {mode: unclaim}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		cfg := Default()
		err := Parse(doc, &cfg)
		if err == nil {
			err = cfg.Resolve()
		}
		if err == nil {
			return
		}
		var cfgErr *Error
		if !errors.As(err, &cfgErr) {
			t.Fatalf("refusal %T %q is not a *config.Error: the CLI would not exit 2", err, err)
		}
		if strings.TrimSpace(cfgErr.Key) == "" {
			t.Fatalf("error %q names no key", err)
		}
		if !strings.Contains(err.Error(), cfgErr.Key) {
			t.Fatalf("error %q does not show its key %q", err, cfgErr.Key)
		}
	})
}
