package db

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/redact"
)

const (
	rightPassword = "Right-pw:/@%secret"
	wrongPassword = "Wrong-pw:/@%secret"
)

func TestConnectionErrorsNeverShowThePassword(t *testing.T) {
	dbname, _ := newDatabase(t)
	role := dbname + "_job"
	if err := pg.CreateRole(testContext(t), role, rightPassword); err != nil {
		t.Fatal(err)
	}
	keyword := func(port int, password string) string {
		return fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable password='%s'", port, role, dbname, password)
	}
	cases := []struct{ name, dsn string }{
		{"wrong password, URL", pg.RoleURL(role, wrongPassword, dbname)},
		{"wrong password, keyword/value", keyword(pg.Port(), wrongPassword)},
		{"unreachable host", strings.Replace(pg.RoleURL(role, rightPassword, dbname), fmt.Sprint(pg.Port()), "1", 1)},
		{"unreachable host, keyword/value", keyword(1, rightPassword)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(testContext(t), c.dsn, Options{})
			if err == nil {
				t.Fatal("Open succeeded")
			}
			t.Logf("Open: %v", err)
			assertNoSecret(t, err.Error(), rightPassword, wrongPassword)
			if !strings.Contains(err.Error(), role) {
				t.Errorf("error %q does not name the role, which would help finding the cause", err)
			}
		})
	}
}

func assertNoSecret(t *testing.T, text string, passwords ...string) {
	t.Helper()
	for _, pw := range passwords {
		for _, spelling := range redact.Spellings(pw) {
			if strings.Contains(text, spelling) {
				t.Fatalf("%q shows password %q", text, spelling)
			}
		}
	}
}

// Least privilege: the job needs nothing but SELECT on KEB's table and the
// right to create its own schema.
func TestJobRunsWithLeastPrivilege(t *testing.T) {
	dbname, _ := newDatabase(t)
	role := dbname + "_job"
	if err := pg.CreateRole(testContext(t), role, rightPassword); err != nil {
		t.Fatal(err)
	}
	exec(t, dbname, fmt.Sprintf("GRANT CREATE ON DATABASE %s TO %s; GRANT SELECT ON instances TO %s", dbname, role, role))
	insertInstances(t, dbname, instance{id: "i-1", runtimeID: "r-1", ga: "ga-a", binding: str("b-1")})

	s := openStore(t, pg.RoleURL(role, rightPassword, dbname), Options{})
	if err := s.Migrate(testContext(t)); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	read, err := s.ReadInstanceCounts(testContext(t))
	if err != nil || len(read.Counts) != 1 {
		t.Fatalf("ReadInstanceCounts: %+v, %v", read, err)
	}
}
