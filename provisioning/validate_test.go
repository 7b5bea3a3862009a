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
		{"pick without instance", func() error { _, err := NextBinding(ctx, nil, Request{HyperscalerType: "aws"}); return err }, "instance id is empty"},
		{"pick without pool", func() error { _, err := NextBinding(ctx, nil, Request{InstanceID: "i"}); return err }, "hyperscaler type is empty"},
		{"pick in a bad schema", func() error {
			_, err := NextBinding(ctx, nil, Request{InstanceID: "i", HyperscalerType: "aws", Schema: "hap; drop"})
			return err
		}, `schema "hap; drop"`},
		{"withdraw without binding", func() error { return WithdrawBinding(ctx, nil, Withdrawal{}) }, "binding name is empty"},
		{"withdraw in a bad schema", func() error { return WithdrawBinding(ctx, nil, Withdrawal{BindingName: "b", Schema: "Hap"}) }, `schema "Hap"`},
		{"claim without binding", func() error {
			return RecordClaim(ctx, nil, Claim{Request: Request{InstanceID: "i", HyperscalerType: "aws"}})
		}, "binding name is empty"},
	} {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %v; want an error mentioning %q", c.name, err, c.mention)
		}
	}
}

func TestTheStatementsNameTheSchema(t *testing.T) {
	for name, build := range map[string]func(string) (string, error){
		"NextBindingSQL": NextBindingSQL, "RecordClaimSQL": RecordClaimSQL, "WithdrawBindingSQL": WithdrawBindingSQL,
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
