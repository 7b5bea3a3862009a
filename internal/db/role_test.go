package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// leastPrivilegeGrants are the statements docs/security.md gives the
// database administrator: the job's role may connect, read KEB's instances
// table and the columns of KEB's operations and events that time a pick
// (the shadow job), and owns the schema the administrator created for it. Nothing else:
// PUBLIC's default rights on the database (CONNECT, TEMP) are revoked too.
func leastPrivilegeGrants(dbname, role string) string {
	return fmt.Sprintf(`
REVOKE ALL ON DATABASE %[1]s FROM PUBLIC;
GRANT CONNECT ON DATABASE %[1]s TO %[2]s;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO %[2]s;
GRANT SELECT ON public.instances TO %[2]s;
GRANT SELECT (id, instance_id, type) ON public.operations TO %[2]s;
GRANT SELECT (operation_id, message, created_at) ON public.events TO %[2]s;
CREATE SCHEMA hap AUTHORIZATION %[2]s;`, dbname, role)
}

// kebGrants let KEB's own role call provisioning.NextBinding on the job's
// tables; the job's role owns them and grants this after migrating.
func kebGrants(keb string) string {
	return fmt.Sprintf(`
GRANT USAGE ON SCHEMA hap TO %[1]s;
GRANT SELECT, INSERT, UPDATE ON hap.binding_candidates TO %[1]s;
GRANT SELECT, INSERT, DELETE ON hap.binding_reservations TO %[1]s;
GRANT SELECT ON hap.candidates_computed TO %[1]s;
GRANT SELECT ON hap.hap_reconciler_migrations TO %[1]s;
GRANT SELECT, INSERT, UPDATE ON hap.recorded_claims TO %[1]s;
GRANT SELECT, INSERT, UPDATE, DELETE ON hap.withdrawn_bindings TO %[1]s;
GRANT SELECT, INSERT, UPDATE, DELETE ON hap.claim_leases TO %[1]s;`, keb)
}

// The job does all of its work with exactly the documented rights, and the
// role can do nothing beyond them: no write to KEB's table, no table of
// KEB's other than instances, no object outside its schema.
func TestTheLeastPrivilegedRoleDoesEverythingTheJobNeedsAndNothingElse(t *testing.T) {
	ctx := testContext(t)
	dbname, _ := newDatabase(t)
	role, keb := dbname+"_job", dbname+"_keb"
	for _, r := range []string{role, keb} {
		if err := pg.CreateRole(ctx, r, rightPassword); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, dbname, leastPrivilegeGrants(dbname, role))
	// KEB's role reads its own instances table, which the pick joins.
	exec(t, dbname, "CREATE TABLE runtime_states (id text PRIMARY KEY); GRANT CONNECT ON DATABASE "+dbname+" TO "+keb+
		"; GRANT USAGE ON SCHEMA public TO "+keb+"; GRANT SELECT ON instances TO "+keb)
	insertInstances(t, dbname, instance{id: "i-1", runtimeID: "r-1", ga: "ga-a", binding: str("b-1")})

	s := openStore(t, pg.RoleURL(role, rightPassword, dbname), Options{})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate into the schema the administrator made: %v", err)
	}
	now := time.Now()
	one, two := 1, 2
	pool := hap.Pool{HyperscalerType: "aws"}
	steps := []struct {
		name string
		do   func() error
	}{
		{"run lock", func() error {
			lock, ok, err := s.TryRunLock(ctx)
			if err != nil || !ok {
				return errors.Join(err, errors.New("not acquired"))
			}
			defer lock.Release()
			return lock.Held(ctx)
		}},
		{"read instances", func() error {
			read, err := s.ReadInstanceCounts(ctx)
			if err == nil && (len(read.Counts) != 1 || read.Counts[0].Active != 1) {
				err = fmt.Errorf("counts %+v", read.Counts)
			}
			return err
		}},
		{"record drift", func() error {
			_, err := s.RecordFindings(ctx, []hap.Finding{{BindingName: "b-1", Kind: hap.KindCountMismatch, GlobalAccountID: "ga-a", Pool: pool}}, now)
			return err
		}},
		{"read drift", func() error { _, err := s.OpenFindings(ctx, hap.AllGlobalAccounts); return err }},
		{"rewrite candidates", func() error {
			return s.ReplaceCandidates(ctx, []hap.Candidate{
				{GlobalAccountID: "ga-a", Pool: pool, BindingName: "b-1", DBCount: 1, EffectiveCount: 1, Limit: &two, Selectable: true, Rank: 1},
				{GlobalAccountID: "ga-a", Pool: pool, BindingName: "b-2", Limit: &one, Selectable: true, Rank: 2},
			}, nil, now, time.Hour)
		}},
		{"read candidates", func() error { _, err := s.Candidates(ctx, hap.AllGlobalAccounts); return err }},
		{"empty sightings", func() error {
			if err := s.SaveEmptySince(ctx, map[string]hap.EmptySighting{"b-2": {GlobalAccountID: "ga-a", Since: now}}); err != nil {
				return err
			}
			_, err := s.EmptySince(ctx)
			return err
		}},
		{"retire a candidate", func() error { _, err := s.RetireCandidate(ctx, "b-2"); return err }},
		{"count use", func() error { _, err := s.InUse(ctx, "b-1"); return err }},
		{"audit a release", func() error {
			_, err := s.RecordRelease(ctx, hap.ReleaseRecord{BindingName: "b-2", GlobalAccountID: "ga-a", Pool: pool,
				Mode: "dirty", Reason: "test", Outcome: hap.OutcomeReleased})
			return err
		}},
		{"read KEB's picks, timed by its events", func() error {
			in, err := s.ShadowInputs(ctx, now.Add(-time.Hour), time.Hour)
			if err == nil && !in.EventsReadable {
				err = errors.New("KEB's events not readable with the documented grants")
			}
			return err
		}},
		{"grant KEB its picks", func() error { return s.db.WithContext(ctx).Exec(kebGrants(keb)).Error }},
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			t.Errorf("%s with the least-privileged role: %v", step.name, err)
		}
	}

	asJob := sqlDB(t, pg.RoleURL(role, rightPassword, dbname))
	for _, forbidden := range []string{
		"INSERT INTO instances (instance_id, runtime_id, global_account_id, provisioning_parameters, created_at, updated_at) VALUES ('x', 'x', 'x', '{}', now(), now())",
		"UPDATE instances SET global_account_id = 'ga-b'",
		"DELETE FROM instances",
		"SELECT * FROM operations",
		"SELECT * FROM events",
		"SELECT * FROM runtime_states",
		"CREATE TABLE public.job_table (id int)",
		"CREATE SCHEMA job_schema",
		"CREATE TEMP TABLE job_temp (id int)",
	} {
		_, err := asJob.ExecContext(ctx, forbidden)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s: %v, want permission denied (42501)", forbidden, err)
		}
	}

	// KEB's role picks through the one statement with the rights granted.
	asKEB := sqlDB(t, pg.RoleURL(keb, rightPassword, dbname))
	pick, err := testbed.Propose(ctx, asKEB, provisioning.Request{InstanceID: "i-2", GlobalAccountID: "ga-a", HyperscalerType: "aws"})
	if err != nil || pick.ClaimNew || pick.Binding != "b-1" {
		t.Errorf("NextBinding as KEB's role: %+v, %v", pick, err)
	}
	// KEB's free step and its claims, with the rights granted.
	if err := testbed.WithdrawBinding(ctx, asKEB, provisioning.Withdrawal{BindingName: "b-1"}); err != nil {
		t.Errorf("WithdrawBinding as KEB's role: %v", err)
	}
	if err := testbed.RecordClaim(ctx, asKEB, provisioning.Claim{Request: provisioning.Request{InstanceID: "i-3", GlobalAccountID: "ga-a",
		HyperscalerType: "aws"}, BindingName: "b-3", Limit: &two}); err != nil {
		t.Errorf("RecordClaim as KEB's role: %v", err)
	}
}

func sqlDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// runtimeRoleGrants are docs/security.md's statements for the split set-up
// the chart uses: the schema owner (here KEB's role, as with the chart's
// defaults) runs the migrations in a step of its own; the role the job runs
// with reads KEB's instances table and reads and writes the rows of the
// job's tables, with no DDL at all.
func runtimeRoleGrants(dbname, owner, runtime string) string {
	return fmt.Sprintf(`
REVOKE ALL ON DATABASE %[1]s FROM PUBLIC;
GRANT CONNECT ON DATABASE %[1]s TO %[2]s, %[3]s;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO %[2]s, %[3]s;
GRANT SELECT ON public.instances TO %[2]s, %[3]s; -- KEB's role owns it in KEB's database
GRANT SELECT (id, instance_id, type) ON public.operations TO %[3]s;
GRANT SELECT (operation_id, message, created_at) ON public.events TO %[3]s;
CREATE SCHEMA hap AUTHORIZATION %[2]s;
GRANT USAGE ON SCHEMA hap TO %[3]s;
ALTER DEFAULT PRIVILEGES FOR ROLE %[2]s IN SCHEMA hap GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %[3]s;
ALTER DEFAULT PRIVILEGES FOR ROLE %[2]s IN SCHEMA hap GRANT USAGE, SELECT ON SEQUENCES TO %[3]s;`, dbname, owner, runtime)
}

// splitRoles makes a database with the chart's two roles, the schema owner
// (KEB's) and the runtime role, granted as docs/security.md says.
func splitRoles(t *testing.T) (dbname, owner, runtime string) {
	t.Helper()
	dbname, _ = newDatabase(t)
	owner, runtime = dbname+"_keb", dbname+"_job"
	for _, r := range []string{owner, runtime} {
		if err := pg.CreateRole(testContext(t), r, rightPassword); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, dbname, runtimeRoleGrants(dbname, owner, runtime))
	return dbname, owner, runtime
}

// With migrations run by the schema owner first (the chart's hook Job), the
// job's own start-up migrate finds nothing to do and needs no DDL, every
// store operation of a run works with row rights alone, and the runtime role
// can change no table.
func TestTheRuntimeRoleNeedsNoDDL(t *testing.T) {
	ctx := testContext(t)
	dbname, owner, runtime := splitRoles(t)
	insertInstances(t, dbname, instance{id: "i-1", runtimeID: "r-1", ga: "ga-a", binding: str("b-1")})

	if err := openStore(t, pg.RoleURL(owner, rightPassword, dbname), Options{}).Migrate(ctx); err != nil {
		t.Fatalf("Migrate as the schema owner: %v", err)
	}
	s := openStore(t, pg.RoleURL(runtime, rightPassword, dbname), Options{})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate as the runtime role on an up-to-date schema: %v", err)
	}
	// Migrate does not even start golang-migrate on a current schema; were
	// it started, it would pass too: its lock is an advisory lock, which
	// needs no privilege, and it looks for its table before creating it.
	err := s.withMigrator(ctx, false, func(m *migrate.Migrate, _ *recordingDriver) error { return m.Up() })
	if !errors.Is(err, migrate.ErrNoChange) {
		t.Fatalf("golang-migrate's Up as the runtime role on an up-to-date schema: %v, want %v", err, migrate.ErrNoChange)
	}
	now := time.Now()
	two := 2
	pool := hap.Pool{HyperscalerType: "aws"}
	for name, do := range map[string]func() error{
		"run lock": func() error {
			lock, ok, err := s.TryRunLock(ctx)
			if err != nil || !ok {
				return errors.Join(err, errors.New("not acquired"))
			}
			defer lock.Release()
			return lock.Held(ctx)
		},
		"read instances": func() error { _, err := s.ReadInstanceCounts(ctx); return err },
		"record drift": func() error {
			_, err := s.RecordFindings(ctx, []hap.Finding{{BindingName: "b-1", Kind: hap.KindCountMismatch, GlobalAccountID: "ga-a", Pool: pool}}, now)
			return err
		},
		"rewrite candidates": func() error {
			return s.ReplaceCandidates(ctx, []hap.Candidate{
				{GlobalAccountID: "ga-a", Pool: pool, BindingName: "b-1", DBCount: 1, EffectiveCount: 1, Limit: &two, Selectable: true, Rank: 1},
			}, nil, now, time.Hour)
		},
		"empty sightings": func() error {
			return s.SaveEmptySince(ctx, map[string]hap.EmptySighting{"b-2": {GlobalAccountID: "ga-a", Since: now}})
		},
		"audit a release": func() error {
			_, err := s.RecordRelease(ctx, hap.ReleaseRecord{BindingName: "b-2", GlobalAccountID: "ga-a", Pool: pool,
				Mode: "dirty", Reason: "test", Outcome: hap.OutcomeReleased})
			return err
		},
	} {
		if err := do(); err != nil {
			t.Errorf("%s as the runtime role: %v", name, err)
		}
	}

	asJob := sqlDB(t, pg.RoleURL(runtime, rightPassword, dbname))
	for _, forbidden := range []string{
		"CREATE TABLE hap.job_table (id int)",
		"ALTER TABLE hap.binding_candidates ADD COLUMN x int",
		"DROP TABLE hap.binding_drift",
		"TRUNCATE hap.binding_releases",
		"CREATE SCHEMA job_schema",
		"UPDATE instances SET global_account_id = 'ga-b'",
	} {
		_, err := asJob.ExecContext(ctx, forbidden)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("%s: %v, want permission denied (42501)", forbidden, err)
		}
	}

	// KEB's role owns the tables: its pick needs no grant.
	asKEB := sqlDB(t, pg.RoleURL(owner, rightPassword, dbname))
	if pick, err := testbed.Propose(ctx, asKEB, provisioning.Request{InstanceID: "i-2", GlobalAccountID: "ga-a", HyperscalerType: "aws"}); err != nil || pick.Binding != "b-1" {
		t.Errorf("NextBinding as KEB's role: %+v, %v", pick, err)
	}

	// A schema behind the release (the owner's step skipped): the runtime
	// role says so when it may not migrate (a dry run), and its migrate is
	// refused rather than run on an old schema.
	if _, err := openStore(t, pg.RoleURL(owner, rightPassword, dbname), Options{}).MigrateDown(ctx, 1); err != nil {
		t.Fatal(err)
	}
	newest := latestVersion(t)
	if err := s.RequireCurrentSchema(ctx); !errors.Is(err, errSchemaNotCurrent) ||
		!containsAll(err.Error(), fmt.Sprintf(`schema "hap" needs version %d`, newest), fmt.Sprintf("at version %d", newest-1)) {
		t.Errorf("RequireCurrentSchema on a schema at %d: %v", newest-1, err)
	}
	var pgErr *pgconn.PgError
	if err := s.Migrate(ctx); !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		t.Errorf("Migrate as the runtime role on a schema at %d: %v, want permission denied (42501)", newest-1, err)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v.Version != newest-1 || v.Dirty {
		t.Errorf("after the refused migrate: %+v, %v; want version %d, clean", v, err, newest-1)
	}
}

// Without the grants on KEB's operations and events (an installation that
// predates them), the shadow job still reads KEB's picks, timed by the
// provision request.
func TestKEBsPicksAreReadWithoutTheGrantsOnItsEvents(t *testing.T) {
	ctx := testContext(t)
	dbname, _ := newDatabase(t)
	role := dbname + "_job"
	if err := pg.CreateRole(ctx, role, rightPassword); err != nil {
		t.Fatal(err)
	}
	exec(t, dbname, fmt.Sprintf(`GRANT USAGE ON SCHEMA public TO %[1]s; GRANT SELECT ON public.instances TO %[1]s;
		GRANT SELECT (id, instance_id, type) ON public.operations TO %[1]s; CREATE SCHEMA hap AUTHORIZATION %[1]s;`, role))
	insertInstances(t, dbname, instance{id: "i-1", runtimeID: "r-1", ga: "ga-a", binding: str("b-1")})
	s := openStore(t, pg.RoleURL(role, rightPassword, dbname), Options{})
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	in, err := s.ShadowInputs(ctx, time.Now().Add(-24*time.Hour), time.Hour)
	if err != nil || in.EventsReadable || len(in.Placed) != 1 || in.Placed[0].ByResolveStep {
		t.Errorf("ShadowInputs without the events grant: %+v, %v; want one pick timed by its request", in, err)
	}
}
