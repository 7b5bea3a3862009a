package reliability

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

const (
	jobPassword   = `Job-pw:/@%'s3cret`
	wrongPassword = `Wrong-pw:/@%'s3cret`
)

// grantLeastPrivilege creates the job's role with exactly the rights
// docs/security.md lists, and returns its URL.
func grantLeastPrivilege(t *testing.T, s *scene) string {
	t.Helper()
	ctx := testContext(t)
	db := s.World.DatabaseName
	role := db + "_job"
	if err := bed.Postgres.CreateRole(ctx, role, jobPassword); err != nil {
		t.Fatal(err)
	}
	grants := fmt.Sprintf(`
REVOKE ALL ON DATABASE %[1]s FROM PUBLIC;
GRANT CONNECT ON DATABASE %[1]s TO %[2]s;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO %[2]s;
GRANT SELECT ON public.instances TO %[2]s;
GRANT SELECT (id, instance_id, type) ON public.operations TO %[2]s;
GRANT SELECT (operation_id, message, created_at) ON public.events TO %[2]s;
CREATE SCHEMA hap AUTHORIZATION %[2]s;`, db, role)
	if err := bed.Postgres.Exec(ctx, db, grants); err != nil {
		t.Fatal(err)
	}
	return bed.Postgres.RoleURL(role, jobPassword, db)
}

// The whole job, migrate and every job of a run with releases, works with
// the least-privileged role.
func TestTheJobRunsEndToEndWithTheLeastPrivilegedRole(t *testing.T) {
	testbed.Require(t)
	l := faultLandscape(41)
	s := newScene(t, l, releaseEverythingEmpty)
	s.databaseURL = grantLeastPrivilege(t, s)
	s.mustRunEach(t, nil, "as the least-privileged role", []string{"migrate"}, []string{"run"}, []string{"report", "-o", "json"})
	s.checkWholeRun(t, l)
}

// Whatever way the password reaches the job and whatever fails, neither the
// log nor the error shows it, in any spelling.
func TestPasswordsNeverAppearInLogsOrErrors(t *testing.T) {
	testbed.Require(t)
	l := faultLandscape(42)
	s := newScene(t, l, releaseEverythingEmpty)
	right := grantLeastPrivilege(t, s)
	role := s.World.DatabaseName + "_job"
	port := fmt.Sprint(bed.Postgres.Port())
	wrong := bed.Postgres.RoleURL(role, wrongPassword, s.World.DatabaseName)
	keyword := fmt.Sprintf("host=127.0.0.1 port=%s user=%s dbname=%s sslmode=disable password='%s'",
		port, role, s.World.DatabaseName, strings.ReplaceAll(wrongPassword, "'", `\'`))
	unreachable := strings.Replace(right, ":"+port+"/", ":1/", 1)
	for _, c := range []struct {
		name     string
		args     []string
		flagURL  string
		env      []string
		wantExit int
	}{
		{"wrong password in --database-url", []string{"run"}, wrong, nil, 1},
		{"wrong password in keyword form", []string{"migrate"}, keyword, nil, 1},
		{"wrong password in APP_DATABASE_PASSWORD", []string{"run"}, "", []string{
			"APP_DATABASE_HOST=127.0.0.1", "APP_DATABASE_PORT=" + port, "APP_DATABASE_USER=" + role,
			"APP_DATABASE_PASSWORD=" + wrongPassword, "APP_DATABASE_NAME=" + s.World.DatabaseName, "APP_DATABASE_SSLMODE=disable"}, 1},
		{"unreachable server in DATABASE_URL", []string{"report"}, "", []string{"DATABASE_URL=" + unreachable}, 1},
		{"successful run logging at debug", []string{"run", "--log-level", "debug"}, right, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s.databaseURL = c.flagURL
			cmd, out := s.command(testContext(t), c.args...)
			cmd.Env = append(cmd.Env, c.env...)
			if code := exitCode(t, cmd); code != c.wantExit {
				t.Fatalf("exit %d, want %d\n%s", code, c.wantExit, out)
			}
			if out.Len() == 0 {
				t.Fatal("no output to check")
			}
			for _, pw := range []string{jobPassword, wrongPassword} {
				for _, spelling := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw),
					url.UserPassword("", pw).String()[1:], strings.ReplaceAll(pw, "'", `\'`)} {
					if strings.Contains(out.String(), spelling) {
						t.Fatalf("the output shows the password as %q:\n%s", spelling, out)
					}
				}
			}
		})
	}
}
