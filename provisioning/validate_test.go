package provisioning

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// noQueries is a database that fails the test when asked anything.
type noQueries struct{ t *testing.T }

func (n noQueries) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	n.t.Helper()
	n.t.Error("a statement ran")
	return nil, sql.ErrConnDone
}

// Requests that cannot be answered are refused before any statement runs:
// a client without a database would fail otherwise, naming it.
func TestIncompleteCallsAreRefusedWithoutAStatement(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		call    func() error
		mention string
	}{
		{"pick without instance", func() error { _, err := (&Client{}).Propose(ctx, Request{HyperscalerType: "aws"}); return err }, "instance id is empty"},
		{"pick without pool", func() error { _, err := (&Client{}).Propose(ctx, Request{InstanceID: "i"}); return err }, "hyperscaler type is empty"},
		{"pick in a bad schema", func() error {
			_, err := (&Client{DB: noQueries{t}, Schema: "hap; drop"}).Propose(ctx, Request{InstanceID: "i", HyperscalerType: "aws"})
			return err
		}, `schema "hap; drop"`},
		{"withdraw without binding", func() error { return (&Client{}).WithdrawBinding(ctx, Withdrawal{}) }, "binding name is empty"},
		{"withdraw in a bad schema", func() error {
			return (&Client{DB: noQueries{t}, Schema: "Hap"}).WithdrawBinding(ctx, Withdrawal{BindingName: "b"})
		}, `schema "Hap"`},
		{"claim without binding", func() error {
			return (&Client{}).RecordClaim(ctx, Claim{Request: Request{InstanceID: "i", GlobalAccountID: "ga", HyperscalerType: "aws"}})
		}, "binding name is empty"},
		{"claim in a shared pool", func() error {
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
		"the dedicated pick": func(s string) (string, error) { t, err := pickSQL(s); return t.dedicated, err },
		"the shared pick":    func(s string) (string, error) { t, err := pickSQL(s); return t.shared, err },
		"recordClaimSQL":     recordClaimSQL, "withdrawSQL": withdrawSQL,
	} {
		sql, err := build("keb_hap")
		if err != nil || !strings.Contains(sql, "keb_hap.") || strings.Contains(sql, " hap.") {
			t.Errorf("%s(keb_hap): %v\n%s", name, err, sql)
		}
		if sql, _ := build(""); !strings.Contains(sql, schema.Default+".") {
			t.Errorf("%s(\"\") does not use the default schema:\n%s", name, sql)
		}
	}
	if got := (&Client{}).maxAge(); got != DefaultMaxAge {
		t.Errorf("a Client without MaxAge allows %s, want DefaultMaxAge %s", got, DefaultMaxAge)
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
