package testbed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

func TestPostgresLifecycle(t *testing.T) {
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pg, err := StartPostgres(ctx)
	if err != nil {
		t.Fatalf("StartPostgres: %v", err)
	}
	defer pg.Stop()

	url, err := pg.NewDatabase(ctx, "keb")
	if err != nil {
		t.Fatalf("NewDatabase: %v", err)
	}

	t.Run("instances table has KEB's columns", func(t *testing.T) {
		assertKEBInstancesColumns(ctx, t, url)
	})

	t.Run("password roles authenticate with their password only", func(t *testing.T) {
		if err := pg.CreateRole(ctx, "reader", "s3cret'pw"); err != nil {
			t.Fatalf("CreateRole: %v", err)
		}
		conn, err := pgx.Connect(ctx, pg.RoleURL("reader", "s3cret'pw", "keb"))
		if err != nil {
			t.Fatalf("connect with the right password: %v", err)
		}
		conn.Close(ctx)
		_, err = pgx.Connect(ctx, pg.RoleURL("reader", "wrong", "keb"))
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
			t.Fatalf("connect with a wrong password: got %v, want invalid_password (28P01)", err)
		}
	})

	t.Run("bad names are refused", func(t *testing.T) {
		if _, err := pg.NewDatabase(ctx, "x; DROP"); err == nil || !strings.Contains(err.Error(), `"x; DROP"`) {
			t.Fatalf("NewDatabase with a bad name: got %v, want an error naming the value", err)
		}
	})

	t.Run("data survives a restart", func(t *testing.T) {
		if err := pg.Exec(ctx, "keb", `INSERT INTO instances (instance_id, runtime_id, global_account_id,
			provisioning_parameters, created_at, updated_at) VALUES ('i-1', 'r-1', 'ga-1', '{}', now(), now())`); err != nil {
			t.Fatal(err)
		}
		if err := pg.Restart(ctx); err != nil {
			t.Fatalf("Restart: %v", err)
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatalf("connect after restart: %v", err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM instances").Scan(&n); err != nil || n != 1 {
			t.Fatalf("rows after restart: %d, %v; want 1", n, err)
		}
	})

	dir := pg.dir
	if err := pg.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := pg.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory %s still there after Stop (%v)", dir, err)
	}
	if pids := processesMentioning(t, dir); len(pids) > 0 {
		t.Fatalf("processes still running on %s after Stop: %v", dir, pids)
	}
}

func assertKEBInstancesColumns(ctx context.Context, t *testing.T, url string) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT column_name, data_type, coalesce(character_maximum_length, 0),
		is_nullable, coalesce(column_default, '') FROM information_schema.columns
		WHERE table_name = 'instances' ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name, typ, nullable, def string
		var length int
		if err := rows.Scan(&name, &typ, &length, &nullable, &def); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{name, typ, strconv.Itoa(length), nullable, def}, " | "))
	}
	want := []string{
		"instance_id | character varying | 255 | NO | ",
		"runtime_id | character varying | 255 | NO | ",
		"global_account_id | character varying | 255 | NO | ",
		"subscription_global_account_id | text | 0 | YES | ''::text",
		"sub_account_id | character varying | 255 | YES | ''::character varying",
		"subscription_secret_name | character varying | 253 | YES | ''::character varying",
		"provider | character varying | 255 | YES | ''::character varying",
		"provider_region | character varying | 32 | YES | ''::character varying",
		"service_plan_name | character varying | 255 | YES | ''::character varying",
		"provisioning_parameters | text | 0 | NO | ",
		"created_at | timestamp with time zone | 0 | NO | ",
		"updated_at | timestamp with time zone | 0 | NO | ",
		"deleted_at | timestamp with time zone | 0 | NO | '0001-01-01 00:00:00+00'::timestamp with time zone",
		"expired_at | timestamp with time zone | 0 | YES | ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("instances columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// KEB's own schema has no index on subscription_secret_name; the one
	// there is the index KEB adds for the read path, and no other.
	var indexes []string
	rows, err = conn.Query(ctx, `SELECT indexname FROM pg_indexes WHERE tablename = 'instances'
		AND indexdef LIKE '%subscription_secret_name%'`)
	if err == nil {
		indexes, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || len(indexes) != 1 || indexes[0] != schema.KEBIndexName {
		t.Fatalf("indexes on subscription_secret_name: %v, %v; want only KEB's index for the read path, %s", indexes, err, schema.KEBIndexName)
	}
}

// processesMentioning lists pids whose command line contains s.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
