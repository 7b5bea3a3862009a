package provisioning

import (
	"context"
	"strings"
	"testing"
)

// Requests that cannot be answered are refused before any statement runs:
// a nil Querier would panic if one did.
func TestIncompleteCallsAreRefusedWithoutAStatement(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		call    func() error
		mention string
	}{
		{"pick without instance", func() error { _, err := Propose(ctx, nil, Request{HyperscalerType: "aws"}); return err }, "instance id is empty"},
		{"pick without pool", func() error { _, err := Propose(ctx, nil, Request{InstanceID: "i"}); return err }, "hyperscaler type is empty"},
		{"pick in a bad schema", func() error {
			_, err := Propose(ctx, nil, Request{InstanceID: "i", HyperscalerType: "aws", Schema: "hap; drop"})
			return err
		}, `schema "hap; drop"`},
		{"withdraw without binding", func() error { return WithdrawBinding(ctx, nil, Withdrawal{}) }, "binding name is empty"},
		{"withdraw in a bad schema", func() error { return WithdrawBinding(ctx, nil, Withdrawal{BindingName: "b", Schema: "Hap"}) }, `schema "Hap"`},
		{"claim without binding", func() error {
			return RecordClaim(ctx, nil, Claim{Request: Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "aws"}})
		}, "binding name is empty"},
		{"claim in a shared pool", func() error {
			return RecordClaim(ctx, nil, Claim{Request: Request{InstanceID: "i", HyperscalerType: "aws"}, BindingName: "s"})
		}, "KEB never claims a shared binding"},
		{"claim through a client, refused once", func() error {
			return (&Client{}).RecordClaim(ctx, Claim{Request: Request{InstanceID: "i", HyperscalerType: "aws"}, BindingName: "s"})
		}, "KEB never claims a shared binding"},
	} {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %v; want an error mentioning %q", c.name, err, c.mention)
		}
	}
}

func TestTheStatementsNameTheSchema(t *testing.T) {
	for name, build := range map[string]func(string) (string, error){
		"NextBindingSQL dedicated": func(s string) (string, error) { d, _, err := NextBindingSQL(s); return d, err },
		"NextBindingSQL shared":    func(s string) (string, error) { _, sh, err := NextBindingSQL(s); return sh, err },
		"recordClaimSQL":           recordClaimSQL, "withdrawSQL": withdrawSQL,
	} {
		sql, err := build("keb_hap")
		if err != nil || !strings.Contains(sql, "keb_hap.") || strings.Contains(sql, " hap.") {
			t.Errorf("%s(keb_hap): %v\n%s", name, err, sql)
		}
		if sql, _ := build(""); !strings.Contains(sql, DefaultSchema+".") {
			t.Errorf("%s(\"\") does not use the default schema:\n%s", name, sql)
		}
	}
	if got := (Request{}).maxAge(); got != DefaultMaxAge {
		t.Errorf("a Request without MaxAge allows %s, want DefaultMaxAge %s", got, DefaultMaxAge)
	}
}

// AccountFor is KEB's decision: off the allowlist no limit, on it the
// provider's limit and the guard.
func TestAccountForFollowsKEBsConfiguration(t *testing.T) {
	cfg := fakeMultiAccount{allowed: "ga-1", limits: map[string]int{"aws": 3}}
	if got := *AccountFor(cfg, 2, "ga-1", "aws"); got != (Account{MultiAccount: true, Limit: 3, MinBindingsForGuard: 2}) {
		t.Errorf("allowed GA: %+v", got)
	}
	if got := *AccountFor(cfg, 2, "ga-2", "aws"); got != (Account{}) {
		t.Errorf("GA off the allowlist: %+v, want no limit and no guard", got)
	}
	if got := *AccountFor(nil, 2, "ga-1", "aws"); got != (Account{}) {
		t.Errorf("no configuration: %+v", got)
	}
}

type fakeMultiAccount struct {
	allowed string
	limits  map[string]int
}

func (f fakeMultiAccount) IsGlobalAccountAllowed(ga string) bool { return ga == f.allowed }
func (f fakeMultiAccount) LimitForProvider(p string) int         { return f.limits[p] }
