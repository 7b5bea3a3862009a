package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// kebReadTables are the job's tables KEB's read path reads and writes
// (provisioning: NextBinding, RecordClaim, WithdrawBinding).
var kebReadTables = []string{"binding_candidates", "candidates_computed", "binding_reservations", "withdrawn_bindings",
	"recorded_claims"}

// noPolicyConfig sets no multi-account policy: a workstation without KEB's
// variables (policy source none).
const noPolicyConfig = "gardener: {pageSize: 500}\n"

// A dry run, run or serve, leaves every row KEB reads as it is, although a
// real run on the same picture would change each of those tables: it would
// rank the bindings by another policy, stamp a new computed_at, drop an
// expired reservation, end a withdrawal and a recorded claim the snapshot
// shows over, and list KEB's instances again.
func TestADryRunChangesNoRowKEBReads(t *testing.T) {
	s := load(t, smallLandscape(), plantedConfig+schedules("@every 1h", "@every 1s", "@every 1h", "@every 1h"))
	s.mustRun(t, "run")
	s.plantWhatARunWouldChange(t)
	noPolicy := filepath.Join(t.TempDir(), "no-policy.yaml")
	if err := os.WriteFile(noPolicy, []byte(noPolicyConfig+schedules("@every 1h", "@every 1s", "@every 1h", "@every 1h")), 0o600); err != nil {
		t.Fatal(err)
	}
	before := s.kebReadRows(t)

	for _, args := range [][]string{
		{"run", "--dry-run"},
		{"run", "--dry-run", "--jobs", "candidates"},
		{"run", "--dry-run", "--config", noPolicy},
	} {
		code, _, logs := execCLI(t, append(append(args[:1:1], s.Flags()...), args[1:]...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, logs)
		}
		if !strings.Contains(logs, "dry run: the candidate table and the tables KEB reads beside it are left as they are") {
			t.Errorf("%v does not say what it left as it is:\n%s", args, logs)
		}
		s.assertKEBReadRows(t, before, args)
	}

	// serve --dry-run: the first fill of the watch runs the candidates job
	// at once, and it runs every second after.
	var log testbed.SyncBuffer
	srv, ln := s.openToServe(t, &log, dryRunFlags{all: true})
	ctx, stop := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	waitFor(t, "two dry candidates runs of serve", func() bool {
		return strings.Count(log.String(), "dry run: the candidate table") >= 2
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	s.assertKEBReadRows(t, before, []string{"serve", "--dry-run"})

	// Without --dry-run and without a policy, run refuses before it
	// connects; told otherwise, it writes, and every table changes.
	code, _, logs := execCLI(t, append(append([]string{"run"}, s.Flags()...), "--config", noPolicy)...)
	if code != exitUsage || !strings.Contains(logs, "pass --allow-no-keb-policy to write it anyway") {
		t.Fatalf("run without a policy: exit %d, want %d naming --allow-no-keb-policy\n%s", code, exitUsage, logs)
	}
	s.assertKEBReadRows(t, before, []string{"run", "(refused)"})
	code, _, logs = execCLI(t, append(append([]string{"run"}, s.Flags()...), "--config", noPolicy, "--allow-no-keb-policy")...)
	if code != exitOK {
		t.Fatalf("run --allow-no-keb-policy: exit %d\n%s", code, logs)
	}
	after := s.kebReadRows(t)
	for _, table := range kebReadTables {
		if after[table] == before[table] {
			t.Errorf("a real run left %s as it was: the dry runs above proved nothing for it", table)
		}
	}
}

// plantWhatARunWouldChange gives the candidates job something to change in
// each table beyond the ranking: a reservation past its TTL, which a rewrite
// drops, an old withdrawal of a binding that is not dirty and an old
// recorded claim, which a rewrite ends, and an instance listed that KEB's
// table does not hold, which a rewrite takes out of the list.
func (s *scene) plantWhatARunWouldChange(t *testing.T) {
	t.Helper()
	_, err := s.db(t).Exec(testContext(t), `
INSERT INTO hap.binding_reservations (instance_id, binding_name, global_account_id, hyperscaler_type, eu_access, reserved_at)
VALUES ('inst-expired', 'ali-b', 'ga-ali', 'alicloud', false, now() - interval '30 days');
UPDATE hap.binding_candidates SET reserved = reserved + 1 WHERE binding_name = 'ali-b';
INSERT INTO hap.withdrawn_bindings (binding_name, withdrawn_at, reason) VALUES ('ali-a', now() - interval '1 hour', 'KEB''s free step marked it dirty');
INSERT INTO hap.recorded_claims (binding_name, global_account_id, hyperscaler_type, eu_access, claimed_at)
VALUES ('ali-c', 'ga-ali', 'alicloud', false, now() - interval '1 hour');`)
	if err != nil {
		t.Fatal(err)
	}
}

// kebReadRows returns every row of each table KEB reads, as text.
func (s *scene) kebReadRows(t *testing.T) map[string]string {
	t.Helper()
	rows := map[string]string{}
	for _, table := range kebReadTables {
		var text string
		err := s.db(t).QueryRow(testContext(t),
			`SELECT coalesce(string_agg(r::text, E'\n' ORDER BY r::text), '') FROM hap.`+table+` r`).Scan(&text)
		if err != nil {
			t.Fatal(err)
		}
		rows[table] = text
	}
	return rows
}

func (s *scene) assertKEBReadRows(t *testing.T, want map[string]string, after []string) {
	t.Helper()
	got := s.kebReadRows(t)
	for _, table := range kebReadTables {
		if got[table] != want[table] {
			t.Errorf("after %v, hap.%s changed:\nbefore\n%s\nafter\n%s", after, table, want[table], got[table])
		}
	}
}
