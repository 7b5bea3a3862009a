package config

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// KEB reads its multi-account settings (MultiAccountConfig) with
// github.com/vrischmann/envconfig v1.4.1 under the prefix APP, as its field
// HapMultiHyperscalerAccount; the job reads them with the same library
// (kebConfig). kebEnvName is the dotted name envconfig starts from.
const kebEnvName = kebPrefix + ".HapMultiHyperscalerAccount"

// The fields of MultiAccountConfig, by their dotted names under
// kebEnvName. KEB's chart sets OpenStack's and AliCloud's limits under a
// name envconfig never reads.
const (
	fieldAllowedGlobalAccounts = "AllowedGlobalAccounts"
	fieldLimitsDefault         = "Limits.Default"
	fieldLimitsAWS             = "Limits.AWS"
	fieldLimitsGCP             = "Limits.GCP"
	fieldLimitsAzure           = "Limits.Azure"
	fieldLimitsOpenStack       = "Limits.OpenStack"
	fieldLimitsAliCloud        = "Limits.AliCloud"
	fieldMinBindingsForGuard   = "MinBindingsForGuard"
)

// kebEnvFields are the fields of MultiAccountConfig in KEB's order, which is
// the order envconfig reads (and reports errors for) them.
var kebEnvFields = []string{
	fieldAllowedGlobalAccounts,
	fieldLimitsDefault,
	fieldLimitsAWS,
	fieldLimitsGCP,
	fieldLimitsAzure,
	fieldLimitsOpenStack,
	fieldLimitsAliCloud,
	fieldMinBindingsForGuard,
}

// providerOfField maps the limit fields to KEB's provider names.
var providerOfField = map[string]string{
	fieldLimitsAWS:       hap.ProviderAWS,
	fieldLimitsGCP:       hap.ProviderGCP,
	fieldLimitsAzure:     hap.ProviderAzure,
	fieldLimitsOpenStack: hap.ProviderOpenStack,
	fieldLimitsAliCloud:  hap.ProviderAliCloud,
}

// chartVariable is the variable KEB's chart (resources/keb/templates/
// deployment.yaml) sets for a limit field: the field's name upper-cased
// behind APP_HAP_MULTI_HYPERSCALER_ACCOUNT_LIMITS_, with no underscore inside
// it. For OpenStack and AliCloud envconfig never reads that name.
func chartVariable(field string) string {
	return "APP_HAP_MULTI_HYPERSCALER_ACCOUNT_" + strings.ToUpper(strings.ReplaceAll(field, ".", "_"))
}

// envKeys returns the environment variables envconfig v1.4.1 looks a field
// up under, in the order it tries them (the first non-empty one wins), for
// naming the variable a value came from: envconfig reads the values
// (kebConfig) but does not say which spelling it took, and its key rule is
// unexported. It follows makeAllPossibleKeys in envconfig.go, for a field
// without a custom name, and a test holds it to the library: each dot
// becomes an underscore; one spelling also puts an underscore before an
// upper-case letter at index 2 or later (counting from the start of the
// whole dotted name) whose next or previous letter is lower-case, unless a
// dot was just written; both spellings are taken upper- and lower-case;
// duplicates go; the rest is sorted.
func envKeys(name string) []string {
	split, plain := envSpellings(name)
	set := map[string]bool{
		strings.ToUpper(split): true, strings.ToLower(split): true,
		strings.ToUpper(plain): true, strings.ToLower(plain): true,
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// envName is the upper-case spelling with underscores at word boundaries,
// the one a chart would normally set.
func envName(name string) string {
	split, _ := envSpellings(name)
	return strings.ToUpper(split)
}

// envSpellings returns the two spellings makeAllPossibleKeys builds before
// changing case: with underscores at word boundaries, and without.
func envSpellings(name string) (split, plain string) {
	n := []rune(name)
	var a, b strings.Builder
	wroteUnderscore := false
	for i, r := range n {
		if r == '.' {
			a.WriteRune('_')
			b.WriteRune('_')
			wroteUnderscore = true
			continue
		}
		// As in the library (which counts bytes; the names here are
		// ASCII): i-1 > 0, so the letter at index 1 never starts a word.
		prevOrNextLower := i+1 < len(n) && i-1 > 0 && (unicode.IsLower(n[i+1]) || unicode.IsLower(n[i-1]))
		if i > 0 && unicode.IsUpper(r) && prevOrNextLower && !wroteUnderscore {
			a.WriteRune('_')
		}
		a.WriteRune(r)
		b.WriteRune(r)
		wroteUnderscore = false
	}
	return a.String(), b.String()
}

// lookupKEB returns the first non-empty variable envconfig reads for the
// field, with its value; "" when none is set (an empty value counts as not
// set).
func lookupKEB(field string) (variable, value string) {
	return lookupEnvconfig(kebEnvName + "." + field)
}

// lookupEnvconfig returns the first non-empty variable envconfig reads for
// the dotted field name, with its value.
func lookupEnvconfig(name string) (variable, value string) {
	for _, key := range envKeys(name) {
		if v := os.Getenv(key); v != "" {
			return key, v
		}
	}
	return "", ""
}

// kebVariablesSet returns the variables of KEB's multi-account settings that
// are set, in KEB's field order.
func kebVariablesSet() []string {
	var set []string
	for _, field := range kebEnvFields {
		if variable, _ := lookupKEB(field); variable != "" {
			set = append(set, variable)
		}
	}
	return set
}

// multiAccountFromEnv builds the multi-account settings from what envconfig
// read of KEB's variables (c): the allowlist as envconfig split it, the
// numbers as envconfig parses an int (strconv.ParseInt, base 10), with
// KEB's defaults (Default 999999, the guard 0, the rest 0). Values KEB would
// accept but that make no sense (negative numbers) are refused as in the
// file, naming the variable.
func multiAccountFromEnv(c kebConfig, r *hapReader) (*MultiAccount, error) {
	out := &MultiAccount{Limits: Limits{Providers: map[string]int{}}}
	if variable, _ := lookupKEB(fieldAllowedGlobalAccounts); variable != "" {
		out.AllowedGlobalAccounts = c.HapMultiHyperscalerAccount.AllowedGlobalAccounts
		for i, ga := range out.AllowedGlobalAccounts {
			r.checkAllowed(variable+"["+strconv.Itoa(i)+"]", ga)
		}
	}
	for _, field := range kebEnvFields[1:] {
		text := c.number(field)
		if text == "" {
			continue // optional and not set
		}
		variable, _ := lookupKEB(field)
		if variable == "" {
			variable = envName(kebEnvName + "." + field) // not set: KEB's default
		}
		what := "clusters"
		if field == fieldMinBindingsForGuard {
			what = "bindings"
		}
		n, err := envInt(variable, text, what)
		if err != nil {
			return nil, err
		}
		switch field {
		case fieldMinBindingsForGuard:
			out.MinBindingsForGuard = n
		case fieldLimitsDefault:
			out.Limits.Default = n
		default:
			out.Limits.Providers[providerOfField[field]] = n
		}
	}
	return out, nil
}

// warnChartOnlyVariables warns about the variables KEB's chart sets for the
// openstack and alicloud limits: KEB never reads them, so neither does the
// job. A value of 0 makes no difference (0 falls back to the default).
func warnChartOnlyVariables(r *hapReader) {
	for _, field := range []string{fieldLimitsOpenStack, fieldLimitsAliCloud} {
		variable := chartVariable(field)
		value := os.Getenv(variable)
		if n, err := strconv.ParseInt(value, 10, 64); value == "" || (err == nil && n == 0) {
			continue
		}
		r.warn(variable, value, "KEB reads the %s limit from %s, not from this variable its chart sets, so the job ignores it too",
			providerOfField[field], envName(kebEnvName+"."+field))
	}
}

// envInt parses a number as envconfig does (strconv.ParseInt, base 10) and
// then holds it to the file's bounds.
func envInt(variable, value, what string) (int, error) {
	n, err := strconv.ParseInt(value, 10, 64)
	switch {
	case err != nil || n < 0:
		return 0, invalid(variable, value, "must be a whole number of %s, 0 or more", what)
	case n > maxCount:
		return 0, invalid(variable, value, "must be at most %d", maxCount)
	}
	return int(n), nil
}

// environmentSource describes the variables read, for the start-up log.
func environmentSource(variables []string) string {
	return fmt.Sprintf("environment (%s)", strings.Join(variables, ", "))
}
