package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kyma-project/hap-reconciler/internal/hint"
)

func TestTheStoreSaysWhatToCheckForPostgreSQLsFailures(t *testing.T) {
	pgErr := func(code, msg string) error {
		return fmt.Errorf("read candidates: %w", &pgconn.PgError{Code: code, Message: msg})
	}
	for _, tc := range []struct {
		name string
		err  error
		want string // empty: no hint
	}{
		{"wrong password", pgErr("28P01", "password authentication failed"), "KEB's database refused the job's login: check the user and password"},
		{"no such role", pgErr("28000", "role does not exist"), "KEB's database refused the job's login"},
		{"no such database", pgErr("3D000", `database "x" does not exist`), "the database does not exist on that server: check the database name"},
		{"no such schema", pgErr("3F000", `schema "hap" does not exist`), `the job's tables are not in schema "hap" of this database: run ` + "`hap-reconciler migrate`"},
		{"the job's table missing", pgErr("42P01", `relation "hap.binding_candidates" does not exist`), `the job's tables are not in schema "hap"`},
		{"KEB's table missing", pgErr("42P01", `relation "instances" does not exist`), "a table is missing: check that the URL names KEB's database"},
		{"a grant missing", pgErr("42501", "permission denied for table instances"), `the job's database role lacks a privilege: check its grants (SELECT on KEB's instances table, and its own schema "hap"`},
		{"another code", pgErr("23505", "duplicate key"), ""},
		{"cancelled", fmt.Errorf("read: %w", context.Canceled), ""},
		{"already explained", hint.New(errors.New("x"), "check this"), "check this"},
	} {
		got := explain(tc.err, "hap")
		h, ok := hint.Of(got)
		switch {
		case tc.want == "" && (ok || got != tc.err):
			t.Errorf("%s: %v, want the error unchanged", tc.name, got)
		case tc.want != "" && (!ok || !strings.HasPrefix(h, tc.want)):
			t.Errorf("%s: hint %q, want it to start %q", tc.name, h, tc.want)
		case !errors.Is(got, tc.err):
			t.Errorf("%s: %v hides its cause", tc.name, got)
		}
	}
	if explain(nil, "hap") != nil {
		t.Error("nil is explained")
	}
}
