package config

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// loadWithEnv is LoadWithEnv with exactly vars of KEB's variables in the
// process environment, where envconfig reads them; the environment is
// restored when the test ends.
func loadWithEnv(t *testing.T, path string, vars map[string]string) (Config, error) {
	t.Helper()
	unsetKEBVariables(t)
	for k, v := range vars {
		t.Setenv(k, v)
	}
	return LoadWithEnv(path)
}

// unsetKEBVariables unsets every APP_ variable, in any case, until the test
// ends.
func unsetKEBVariables(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(strings.ToUpper(name), kebPrefix+"_") {
			t.Setenv(name, "")
			if err := os.Unsetenv(name); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// limitsOf returns every limit the policy applies, as the start-up log
// shows them.
func limitsOf(p hap.Policy) map[string]int {
	out := map[string]int{"default": p.LimitForProvider("default")}
	for _, provider := range hap.LimitProviders {
		out[provider] = p.LimitForProvider(provider)
	}
	return out
}

func every(n int) map[string]int {
	return map[string]int{"aws": n, "gcp": n, "azure": n, "openstack": n, "alicloud": n, "default": n}
}

func with(base map[string]int, provider string, n int) map[string]int {
	out := map[string]int{}
	for k, v := range base {
		out[k] = v
	}
	out[provider] = n
	return out
}

func TestKEBsHapBlockLoadsVerbatimWithTheFeatureOff(t *testing.T) {
	cfg, err := Load("testdata/keb-values-hap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy()
	if p.AllowAll || len(p.Allowed) != 0 || p.MultiAccount("any-ga") || p.MinBindingsForGuard != 0 {
		t.Errorf("feature must be off: %+v", p)
	}
	// Every limit 0: the providers fall back to the default, whose 0 means
	// no limit.
	if got := limitsOf(p); !reflect.DeepEqual(got, every(hap.NoLimit)) {
		t.Errorf("limits %v", got)
	}
	if len(cfg.HAP.Rule) != 11 || cfg.HAP.Rule[7] != "sap-converged-cloud(HR=*) -> S" {
		t.Errorf("rule %q", cfg.HAP.Rule)
	}
	// KEB's own block keeps the older wildcard form, which today sends no
	// real runtime anywhere: a warning naming the entry.
	want := []Warning{{Key: limitsKey + ".gdch", Value: "0", Reason: "KEB has no limit for gdch; it applies the default"}}
	if len(cfg.Warnings) != 2 || !reflect.DeepEqual(cfg.Warnings[:1], want) ||
		cfg.Warnings[1].Key != "hap.rule[7]" || !strings.Contains(cfg.Warnings[1].Reason, "HR=*") {
		t.Errorf("warnings\n got %+v\nwant %+v and hap.rule[7]'s HR=*", cfg.Warnings, want)
	}
	if !strings.HasPrefix(cfg.PolicySource, "file ") || !strings.HasSuffix(cfg.PolicySource, "keb-values-hap.yaml") {
		t.Errorf("source %q", cfg.PolicySource)
	}
}

func TestLimitsFallBackAsKEBsLimitForProvider(t *testing.T) {
	block := "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: ['*']\n"
	tests := []struct {
		name, limits string
		want         map[string]int
	}{
		{"no limits block: KEB's envconfig default", "", every(hap.NoLimit)},
		{"missing default: KEB's envconfig default", "    limits: {aws: 3}\n", with(every(hap.NoLimit), "aws", 3)},
		{"null default counts as missing", "    limits: {default: ~, gcp: 2}\n", with(every(hap.NoLimit), "gcp", 2)},
		{"default 0: no limit", "    limits: {default: 0, azure: 4}\n", with(every(hap.NoLimit), "azure", 4)},
		{"provider 0 falls back to the default", "    limits: {default: 5, aws: 0, gcp: 7}\n", with(every(5), "gcp", 7)},
		{"all providers", "    limits: {default: 1, aws: 2, gcp: 3, azure: 4}\n",
			map[string]int{"default": 1, "aws": 2, "gcp": 3, "azure": 4, "openstack": 1, "alicloud": 1}},
		{"openstack and alicloud from a values file are not applied", "    limits: {default: 4, openstack: 9, alicloud: 8}\n", every(4)},
		{"gdch gets the default", "    limits: {default: 4, gdch: 9}\n", every(4)},
		{"AWS is not aws", "    limits: {default: 4, AWS: 9}\n", every(4)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(write(t, block+tc.limits))
			if err != nil {
				t.Fatal(err)
			}
			p := cfg.Policy()
			if got := limitsOf(p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("limits\n got %v\nwant %v", got, tc.want)
			}
			if got := p.LimitForProvider("gdch"); got != tc.want["default"] {
				t.Errorf("gdch: %d, want the default %d", got, tc.want["default"])
			}
		})
	}
}

func TestMinBindingsForGuard(t *testing.T) {
	for doc, want := range map[string]int{
		"hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [ga]\n":                             0,
		"hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [ga]\n    minBindingsForGuard: 3\n": 3,
	} {
		cfg, err := Load(write(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Policy().MinBindingsForGuard; got != want {
			t.Errorf("%q: guard %d, want %d", doc, got, want)
		}
	}
}

func TestWhatTheJobDoesNotApplyIsAWarning(t *testing.T) {
	const block = "hap:\n  multiHyperscalerAccount:\n"
	tests := []struct {
		name, doc string
		want      []Warning
	}{
		{"KEB's keys as KEB applies them", block + "    allowedGlobalAccounts: [ga-1]\n    limits: {default: 3, aws: 4, openstack: 0, alicloud: 0}\n", nil},
		{"gdch", block + "    limits: {gdch: 5}\n", []Warning{
			{limitsKey + ".gdch", "5", "KEB has no limit for gdch; it applies the default"}}},
		{"a provider under another spelling", block + "    limits: {Azure: 5}\n", []Warning{
			{limitsKey + ".Azure", "5", "KEB has no limit key Azure (its key for this provider is azure); not applied"}}},
		{"default under another spelling", block + "    limits: {Default: 5}\n", []Warning{
			{limitsKey + ".Default", "5", "KEB has no limit key Default (its key is default); not applied"}}},
		{"an unknown limit key is not checked", block + "    limits: {'': -1}\n", []Warning{
			{limitsKey + `.""`, "-1", `KEB has no limit for ""; it applies the default`}}},
		{"openstack", block + "    limits: {openstack: 100}\n", []Warning{
			{limitsKey + ".openstack", "100", "KEB as deployed does not apply this limit: it reads APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_OPEN_STACK, " +
				"while its chart sets APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_OPENSTACK, so KEB, and the job with it, applies the default for openstack"}}},
		{"alicloud", block + "    limits: {alicloud: 7}\n", []Warning{
			{limitsKey + ".alicloud", "7", "KEB as deployed does not apply this limit: it reads APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_ALI_CLOUD, " +
				"while its chart sets APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_ALICLOUD, so KEB, and the job with it, applies the default for alicloud"}}},
		{"empty and padded allowlist entries", block + "    allowedGlobalAccounts: ['', ' ga-2', ga-3]\n", []Warning{
			{allowlistKey + "[0]", `""`, "an empty entry matches no global account"},
			{allowlistKey + "[1]", `" ga-2"`, "KEB compares global account IDs exactly, so an entry with surrounding spaces matches no global account"}}},
		{"KEB's switch for the candidate table", block + "  candidateTable: {enabled: true, maxAge: 30m}\n", nil},
		{"unknown keys at every depth below hap", block + "    perPlan: {aws: 2}\n  ruleFile: /etc/rules\n  newFeature: {enabled: true}\n", []Warning{
			{"hap.multiHyperscalerAccount.perPlan", `{"aws":2}`, "not a setting the job knows in KEB's hap block; ignored (a newer KEB may have added it)"},
			{"hap.newFeature", `{"enabled":true}`, "not a setting the job knows in KEB's hap block; ignored (a newer KEB may have added it)"},
			{"hap.ruleFile", `"/etc/rules"`, "not a setting the job knows in KEB's hap block; ignored (a newer KEB may have added it)"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(write(t, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Warnings, tc.want) {
				t.Errorf("warnings\n got %+v\nwant %+v", cfg.Warnings, tc.want)
			}
		})
	}
}

func TestKEBsVariablesGiveThePolicyOfTheEquivalentFile(t *testing.T) {
	const v = "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_"
	tests := []struct {
		name string
		vars map[string]string
		file string
	}{
		{"allowlist, limits, guard", map[string]string{
			v + "ALLOWED_GLOBAL_ACCOUNTS": "ga-1,ga-2", v + "LIMITS_DEFAULT": "3", v + "LIMITS_AWS": "5", v + "LIMITS_GCP": "0",
			v + "LIMITS_AZURE": "6", v + "MIN_BINDINGS_FOR_GUARD": "2",
		}, "allowedGlobalAccounts: [ga-1, ga-2]\n    limits: {default: 3, aws: 5, gcp: 0, azure: 6}\n    minBindingsForGuard: 2\n"},
		{"every GA, no default: KEB's envconfig default", map[string]string{
			v + "ALLOWED_GLOBAL_ACCOUNTS": "*", v + "LIMITS_AWS": "4",
		}, "allowedGlobalAccounts: ['*']\n    limits: {aws: 4}\n"},
		{"the other spellings envconfig reads", map[string]string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_ALLOWEDGLOBALACCOUNTS": "ga-1", "app_hap_multi_hyperscaler_account_limits_default": "2",
			"app_hapmultihyperscaleraccount_minbindingsforguard": "1",
		}, "allowedGlobalAccounts: [ga-1]\n    limits: {default: 2}\n    minBindingsForGuard: 1\n"},
		{"an empty variable is not set", map[string]string{
			v + "ALLOWED_GLOBAL_ACCOUNTS": "ga-1", v + "LIMITS_DEFAULT": "",
		}, "allowedGlobalAccounts: [ga-1]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fromEnv, err := loadWithEnv(t, write(t, "namespace: garden-kyma\n"), tc.vars)
			if err != nil {
				t.Fatal(err)
			}
			fromFile, err := Load(write(t, "hap:\n  multiHyperscalerAccount:\n    "+tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromEnv.Policy(), fromFile.Policy()) {
				t.Errorf("policy from the environment differs from the file's\n env %+v\nfile %+v", fromEnv.Policy(), fromFile.Policy())
			}
			if !strings.HasPrefix(fromEnv.PolicySource, "environment (") || fromEnv.Namespace != "garden-kyma" {
				t.Errorf("source %q, namespace %q", fromEnv.PolicySource, fromEnv.Namespace)
			}
		})
	}
}

// What only the environment can say, because KEB reads it there: the
// openstack and alicloud limits under their envconfig names, the precedence
// among spellings, and envconfig's list splitting.
func TestKEBsVariablesAsEnvconfigReadsThem(t *testing.T) {
	const v = "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_"
	cfg, err := loadWithEnv(t, "", map[string]string{
		v + "ALLOWED_GLOBAL_ACCOUNTS": "ga-1, ga-2,,{ga-3,ga-4}",
		v + "LIMITS_DEFAULT":          "3",
		v + "LIMITS_OPEN_STACK":       "9",
		v + "LIMITS_ALI_CLOUD":        "8",
		// Both spell AWS's limit; envconfig tries the keys in sorted order,
		// and "APP_HAPM..." sorts before "APP_HAP_...".
		v + "LIMITS_AWS": "5",
		"APP_HAPMULTIHYPERSCALERACCOUNT_LIMITS_AWS":      "6",
		"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_AZURE": "+2",
	})
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy()
	want := map[string]int{"default": 3, "aws": 6, "gcp": 3, "azure": 2, "openstack": 9, "alicloud": 8}
	if got := limitsOf(p); !reflect.DeepEqual(got, want) {
		t.Errorf("limits\n got %v\nwant %v", got, want)
	}
	if got := cfg.HAP.MultiHyperscalerAccount.AllowedGlobalAccounts; !slices.Equal(got, []string{"ga-1", " ga-2", "", "{ga-3,ga-4}"}) {
		t.Errorf("allowlist %q", got)
	}
	if !p.MultiAccount("ga-1") || p.MultiAccount("ga-2") {
		t.Errorf("KEB matches the entries exactly: %+v", p)
	}
	if got := warningKeys(cfg.Warnings); !slices.Equal(got, []string{v + "ALLOWED_GLOBAL_ACCOUNTS[1]", v + "ALLOWED_GLOBAL_ACCOUNTS[2]"}) {
		t.Errorf("warnings %+v", cfg.Warnings)
	}
}

func TestTheChartsOpenstackAndAlicloudVariablesAreIgnored(t *testing.T) {
	const v = "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_"
	cfg, err := loadWithEnv(t, "", map[string]string{
		v + "ALLOWED_GLOBAL_ACCOUNTS": "*",
		v + "LIMITS_DEFAULT":          "3",
		v + "LIMITS_OPENSTACK":        "100",
		v + "LIMITS_ALICLOUD":         "0", // makes no difference: no warning
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(cfg.Policy()); !reflect.DeepEqual(got, every(3)) {
		t.Errorf("limits %v", got)
	}
	want := []Warning{{v + "LIMITS_OPENSTACK", `"100"`,
		"KEB reads the openstack limit from APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_OPEN_STACK, not from this variable its chart sets, so the job ignores it too"}}
	if !reflect.DeepEqual(cfg.Warnings, want) {
		t.Errorf("warnings\n got %+v\nwant %+v", cfg.Warnings, want)
	}

	// Alone they are no source: envconfig never reads them.
	cfg, err = loadWithEnv(t, write(t, "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [ga]\n"), map[string]string{v + "LIMITS_ALICLOUD": "5"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.PolicySource, "file ") || len(cfg.Warnings) != 1 || cfg.Warnings[0].Key != v+"LIMITS_ALICLOUD" {
		t.Errorf("source %q, warnings %+v", cfg.PolicySource, cfg.Warnings)
	}
}

func TestFileBlockAndKEBsVariablesTogetherAreRefused(t *testing.T) {
	path := write(t, "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [ga]\n")
	_, err := loadWithEnv(t, path, map[string]string{"app_hap_multi_hyperscaler_account_limits_default": "4"})
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("want a configuration error, got %v", err)
	}
	for _, want := range []string{"hap.multiHyperscalerAccount", path, "app_hap_multi_hyperscaler_account_limits_default", "use one"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	// A hap block without multiHyperscalerAccount leaves the variables the
	// only source.
	cfg, err := loadWithEnv(t, write(t, "hap:\n  rule: [aws]\n"), map[string]string{"app_hap_multi_hyperscaler_account_limits_default": "4"})
	if err != nil || cfg.Policy().LimitForProvider("aws") != 4 {
		t.Fatalf("%v, policy %+v", err, cfg.Policy())
	}
}

func TestBadKEBVariableNamesVariableAndValue(t *testing.T) {
	for _, tc := range []struct{ variable, value, reason string }{
		{"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_DEFAULT", "lots", "whole number of clusters"},
		{"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_GCP", "2.5", "whole number of clusters"},
		{"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_AWS", " 3", "whole number of clusters"}, // strconv.ParseInt refuses it, as KEB does
		{"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_OPEN_STACK", "-1", "0 or more"},
		{"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_ALI_CLOUD", "99999999999", "at most"},
		{"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_MIN_BINDINGS_FOR_GUARD", "two", "whole number of bindings"},
	} {
		_, err := loadWithEnv(t, "", map[string]string{tc.variable: tc.value})
		var cfgErr *Error
		if !errors.As(err, &cfgErr) {
			t.Errorf("%s=%q: want a configuration error, got %v", tc.variable, tc.value, err)
			continue
		}
		for _, want := range []string{tc.variable, `"` + tc.value + `"`, tc.reason} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
		}
	}
}

// The expected keys are worked out by hand from makeAllPossibleKeys in
// envconfig.go of github.com/vrischmann/envconfig@v1.4.1.
func TestEnvKeysFollowEnvconfig(t *testing.T) {
	const p = "APP.HapMultiHyperscalerAccount."
	tests := []struct {
		name string
		want []string
	}{
		{p + "AllowedGlobalAccounts", []string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_ALLOWEDGLOBALACCOUNTS", "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_ALLOWED_GLOBAL_ACCOUNTS",
			"app_hap_multi_hyperscaler_account_allowed_global_accounts", "app_hapmultihyperscaleraccount_allowedglobalaccounts"}},
		{p + "MinBindingsForGuard", []string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_MINBINDINGSFORGUARD", "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_MIN_BINDINGS_FOR_GUARD",
			"app_hap_multi_hyperscaler_account_min_bindings_for_guard", "app_hapmultihyperscaleraccount_minbindingsforguard"}},
		{p + "Limits.Default", []string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_LIMITS_DEFAULT", "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_DEFAULT",
			"app_hap_multi_hyperscaler_account_limits_default", "app_hapmultihyperscaleraccount_limits_default"}},
		// An upper-case run ending the name starts no word.
		{p + "Limits.AWS", []string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_LIMITS_AWS", "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_AWS",
			"app_hap_multi_hyperscaler_account_limits_aws", "app_hapmultihyperscaleraccount_limits_aws"}},
		{p + "Limits.Azure", []string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_LIMITS_AZURE", "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_AZURE",
			"app_hap_multi_hyperscaler_account_limits_azure", "app_hapmultihyperscaleraccount_limits_azure"}},
		// Camel case inside a field name: OPEN_STACK, never the chart's
		// ..._LIMITS_OPENSTACK with the word-boundary underscores elsewhere.
		{p + "Limits.OpenStack", []string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_LIMITS_OPENSTACK", "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_OPEN_STACK",
			"app_hap_multi_hyperscaler_account_limits_open_stack", "app_hapmultihyperscaleraccount_limits_openstack"}},
		{p + "Limits.AliCloud", []string{
			"APP_HAPMULTIHYPERSCALERACCOUNT_LIMITS_ALICLOUD", "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_ALI_CLOUD",
			"app_hap_multi_hyperscaler_account_limits_ali_cloud", "app_hapmultihyperscaleraccount_limits_alicloud"}},
		// The rule's corners: the letter at index 1 never starts a word
		// (the library tests i-1 > 0); neither does the last letter; one
		// spelling only when there is no boundary.
		{"aBc", []string{"ABC", "abc"}},
		{"abC", []string{"ABC", "abc"}},
		{"abCd", []string{"ABCD", "AB_CD", "ab_cd", "abcd"}},
		{"URLPath", []string{"URLPATH", "URL_PATH", "url_path", "urlpath"}},
		{"a.B", []string{"A_B", "a_b"}},
	}
	for _, tc := range tests {
		if got := envKeys(tc.name); !slices.Equal(got, tc.want) {
			t.Errorf("envKeys(%q)\n got %q\nwant %q", tc.name, got, tc.want)
		}
		// The library itself reads each spelling, alone, for KEB's fields.
		field, ok := strings.CutPrefix(tc.name, p)
		if !ok {
			continue
		}
		for _, key := range tc.want {
			value := "7"
			if field == "AllowedGlobalAccounts" {
				value = "ga-7"
			}
			if got := readOneVariable(t, key, value, field); got != value {
				t.Errorf("envconfig with only %s=%s set reads %s as %q", key, value, field, got)
			}
		}
	}
	for _, field := range []string{"Limits.OpenStack", "Limits.AliCloud"} {
		if got := readOneVariable(t, chartVariable(field), "7", field); got != "" {
			t.Errorf("envconfig reads the chart's %s as %s: %q", chartVariable(field), field, got)
		}
	}
	for _, field := range []string{"Limits.OpenStack", "Limits.AliCloud"} {
		if slices.Contains(envKeys(kebEnvName+"."+field), chartVariable(field)) {
			t.Errorf("envconfig would read the chart's %s", chartVariable(field))
		}
	}
	for _, field := range []string{"Limits.Default", "Limits.AWS", "Limits.GCP", "Limits.Azure"} {
		if !slices.Contains(envKeys(kebEnvName+"."+field), chartVariable(field)) {
			t.Errorf("envconfig would not read the chart's %s", chartVariable(field))
		}
	}
}

// The allowlist split as KEB's envconfig splits it: at every comma outside
// braces, keeping empty items and spaces.
func TestAllowlistSplitAsEnvconfig(t *testing.T) {
	for value, want := range map[string][]string{
		"a":         {"a"},
		"a,b":       {"a", "b"},
		"a, b":      {"a", " b"},
		"a,":        {"a", ""},
		",":         {"", ""},
		"{a,b},c":   {"{a,b}", "c"},
		"{a,b}}c,d": {"{a,b}}c", "d"},
	} {
		cfg, err := loadWithEnv(t, "", map[string]string{"APP_HAP_MULTI_HYPERSCALER_ACCOUNT_ALLOWED_GLOBAL_ACCOUNTS": value})
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.HAP.MultiHyperscalerAccount.AllowedGlobalAccounts; !slices.Equal(got, want) {
			t.Errorf("%q is read as %q, want %q", value, got, want)
		}
	}
}

// readOneVariable sets key=value alone among KEB's variables and returns
// what envconfig reads into KEB's field: the allowlist joined by commas, a
// number's text ("" when it read none; a default does not count).
func readOneVariable(t *testing.T, key, value, field string) string {
	t.Helper()
	unsetKEBVariables(t)
	unset, err := readKEBConfig()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(key, value)
	c, err := readKEBConfig()
	if err != nil {
		t.Fatal(err)
	}
	if field == "AllowedGlobalAccounts" {
		return strings.Join(c.HapMultiHyperscalerAccount.AllowedGlobalAccounts, ",")
	}
	if got := c.number(field); got != unset.number(field) {
		return got
	}
	return ""
}
