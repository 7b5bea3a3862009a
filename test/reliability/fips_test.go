package reliability

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The binary as released (the FIPS 140-3 module) in FIPS-only mode, as the
// image runs it, does the whole job over TLS: to kube-apiserver, in front of
// the real gardener-apiserver, and to PostgreSQL, verified, as a role the
// server admits over TLS alone, authenticating with SCRAM. Every job runs
// once, then report and pools read what they wrote. Anything the
// job used outside the FIPS module (a hash, a key exchange, a certificate's
// algorithm) would fail its command under fips140=only.
func TestTheJobRunsInFIPSOnlyModeOverTLS(t *testing.T) {
	testbed.Require(t)
	ctx := testContext(t)
	if got, err := testbed.BuiltFIPSModule(binary); err != nil || got != testbed.FIPSModule {
		t.Fatalf("the binary is built with GOFIPS140=%q (%v), want %s as make build", got, err, testbed.FIPSModule)
	}
	caFile, err := bed.Postgres.ServeTLS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if server := bed.Kube.Config().Host; !strings.HasPrefix(server, "https://") {
		t.Fatalf("the kubeconfig's server is %s, not TLS", server)
	}
	l := faultLandscape(44)
	s := newScene(t, l, releaseEverythingEmpty)
	plain := grantLeastPrivilege(t, s)
	role := s.World.DatabaseName + "_job"
	if err := bed.Postgres.Exec(ctx, "postgres", fmt.Sprintf("GRANT %s TO %s", testbed.TLSOnlyGroup, role)); err != nil {
		t.Fatal(err)
	}

	// Without TLS the role gets nowhere: what succeeds below went over TLS.
	s.databaseURL = plain
	cmd, out := s.command(ctx, "migrate")
	cmd.Env = append(cmd.Env, "GODEBUG="+testbed.FIPSOnly)
	if code := exitCode(t, cmd); code == 0 || !strings.Contains(out.String(), "no encryption") {
		t.Fatalf("migrate without TLS as the TLS-only role: exit %d, want a refusal naming no encryption\n%s", code, out)
	}

	s.databaseURL = bed.Postgres.TLSURL(plain, caFile)
	for _, args := range [][]string{{"migrate"}, {"run"}, {"report", "-o", "json"}, {"pools", "-o", "json"}} {
		cmd, out := s.command(ctx, args...)
		cmd.Env = append(cmd.Env, "GODEBUG="+testbed.FIPSOnly)
		if code := exitCode(t, cmd); code != 0 {
			t.Fatalf("%v in FIPS-only mode over TLS: exit %d\n%s", args, code, out)
		}
	}
	checkCandidates(t, s.candidates(t), wantCandidates(l, s.Config.Policy()), s.released(t)...)
	if labels := s.bindingLabels(t)["control-empty"]; labels[hap.LabelDirty] != "true" {
		t.Errorf("the empty binding was not released: %v", labels)
	}
}
