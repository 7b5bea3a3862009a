package reliability

import (
	"fmt"
	"strings"
	"testing"

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
	s.mustRunEach(t, []string{"GODEBUG=" + testbed.FIPSOnly}, "in FIPS-only mode over TLS",
		[]string{"migrate"}, []string{"run"}, []string{"report", "-o", "json"}, []string{"pools", "-o", "json"})
	s.checkWholeRun(t, l)
}

// A role PostgreSQL asks for MD5 password authentication cannot log in
// FIPS-only: the job fails as any failed command does, with one error line
// saying what to change, not with Go's panic and a stack trace.
func TestAnMD5LoginInFIPSOnlyModeIsAClearError(t *testing.T) {
	testbed.Require(t)
	ctx := testContext(t)
	s := newScene(t, faultLandscape(45), releaseEverythingEmpty)
	role := s.World.DatabaseName + "_md5"
	if err := bed.Postgres.CreateMD5Role(ctx, role, jobPassword); err != nil {
		t.Fatal(err)
	}
	s.databaseURL = bed.Postgres.RoleURL(role, jobPassword, s.World.DatabaseName)
	cmd, out := s.command(ctx, "migrate")
	cmd.Env = append(cmd.Env, "GODEBUG="+testbed.FIPSOnly)
	code := exitCode(t, cmd)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if code != 1 || strings.Contains(out.String(), "goroutine ") || !strings.Contains(last, `"level":"ERROR"`) ||
		!strings.Contains(last, "MD5 password authentication") || !strings.Contains(last, "SCRAM-SHA-256") {
		t.Fatalf("migrate as an MD5 role in FIPS-only mode: exit %d, want 1 and one error line naming MD5 and SCRAM-SHA-256\n%s", code, out)
	}
	if strings.Contains(out.String(), jobPassword) {
		t.Errorf("the output shows the password:\n%s", out)
	}
}
