package db

import (
	"errors"
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

func TestScrubReplacesEverySpelling(t *testing.T) {
	secrets := redact.Spellings("p@ss word/1")
	err := redact.Scrub(fmt.Errorf("dial: %w", errors.New("bad user:p%40ss%20word%2F1 and p@ss+word%2F1 and p@ss word/1")), secrets)
	assertNoSecret(t, err.Error(), "p@ss word/1")
	if errors.Unwrap(err) != nil {
		t.Error("a scrubbed error must not unwrap to the text that held the password")
	}
	clean := errors.New("connection refused")
	if got := redact.Scrub(clean, secrets); got != clean {
		t.Errorf("an error without the password was replaced: %v", got)
	}
}

// A password is masked where it stands as a value, never character by
// character: a one-character password leaves the rest of the message
// readable, wherever else its character occurs.
func TestScrubMasksAOneCharacterPasswordAsAWholeValue(t *testing.T) {
	secrets := redact.Spellings("a")
	err := redact.Scrub(errors.New(`connect to postgres://keb:a@db-a.example/broker?password=a&sslmode=disable: failed: password authentication failed for user "keb" (password 'a')`), secrets)
	want := `connect to postgres://keb:xxxxx@db-a.example/broker?password=xxxxx&sslmode=disable: failed: password authentication failed for user "keb" (password 'xxxxx')`
	if err.Error() != want {
		t.Fatalf("scrubbed\n got %s\nwant %s", err, want)
	}
	// Its escaped forms too, as a value.
	secrets = redact.Spellings("@")
	err = redact.Scrub(errors.New("dial postgres://keb:%40@db: refused; password=%40 at host@db"), secrets)
	if want := "dial postgres://keb:xxxxx@db: refused; password=xxxxx at host@db"; err.Error() != want {
		t.Fatalf("scrubbed\n got %s\nwant %s", err, want)
	}
	clean := errors.New(`password authentication failed for user "keb"`)
	if got := redact.Scrub(clean, redact.Spellings("a")); got != clean {
		t.Errorf("a message without the password as a value was replaced: %v", got)
	}
}
