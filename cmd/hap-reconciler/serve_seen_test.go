package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// seenConfig runs serve's candidates only after changes (the schedules are
// an hour apart) and proves how far the table has seen Gardener twice a
// second.
const seenConfig = plantedConfig + "candidates:\n  gardenerSeenEvery: 500ms\n"

// While no binding changes, serve's proofs go on stamping the table: a
// shoot changing moves Gardener's revision on, and only the bookmarks of
// the bindings watch can carry the bindings cache there.
func TestServeStampsTheTableAsSeenWhileNoBindingChanges(t *testing.T) {
	s := load(t, smallLandscape(), seenConfig+schedules("@every 1h", "@every 1h", "@every 1h", "@every 1h"))
	base := s.serveSeen(t)
	waitFor(t, "a first stamp", func() bool { seen, _ := s.seen(t, "", ""); return !math.IsInf(seen, -1) })

	client := gardenerClient(t)
	shoots := client.Resource(testbed.ShootsResource).Namespace(s.World.Namespace)
	patch := []byte(`{"metadata":{"annotations":{"hap-reconciler.kyma-project.io/seen-test":"moved"}}}`)
	if _, err := shoots.Patch(testContext(t), shootOf(t, shoots, "ali-a"), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	after := s.databaseNow(t)
	oldest, looks := 0.0, 0
	waitFor(t, "a stamp later than the shoot's change", func() bool {
		if age, ok := gauge(t, base, "hap_reconciler_gardener_seen_age_seconds"); ok {
			oldest, looks = max(oldest, age), looks+1
		}
		seen, _ := s.seen(t, "", "")
		return seen > after
	})
	t.Logf("the stamp's age as serve exposed it while waiting: at most %.2fs in %d looks", oldest, looks)
}

// The stamp never claims a change the table lacks: with the rewrite held
// back, a binding marked dirty keeps its row, and proofs made after the
// change leave the stamp before it; once the rewrite goes through, the stamp
// passes the change in the same snapshot in which the row is gone.
func TestServeNeverStampsATableThatLacksABindingChange(t *testing.T) {
	s := load(t, smallLandscape(), seenConfig+schedules("@every 1h", "@every 1h", "@every 1h", "@every 1h"))
	base := s.serveSeen(t)
	waitFor(t, "a stamp on the table of the first fill", func() bool {
		seen, listed := s.seen(t, "ali-c", "ga-ali")
		return !math.IsInf(seen, -1) && listed
	})

	// Rewrites wait for the lock a test session holds.
	conn := s.db(t)
	key := rewriteLockKey(s.Store(t, testContext(t)).Schema())
	if _, err := conn.Exec(testContext(t), "SELECT pg_advisory_lock($1)", key); err != nil {
		t.Fatal(err)
	}
	locked := true
	unlock := func() {
		if _, err := conn.Exec(testContext(t), "SELECT pg_advisory_unlock($1)", key); err != nil {
			t.Fatal(err)
		}
		locked = false
	}
	t.Cleanup(func() {
		if locked {
			unlock()
		}
	})
	client := gardenerClient(t)
	label, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{hap.LabelDirty: "true"}}})
	bindings := client.Resource(testbed.CredentialsBindingsResource).Namespace(s.World.Namespace)
	if _, err := bindings.Patch(testContext(t), "ali-c", types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	changed := s.databaseNow(t)
	waitFor(t, "a proof made after the change", func() bool {
		proved, ok := gauge(t, base, "hap_reconciler_gardener_seen_proved_timestamp_seconds")
		return ok && proved > changed+0.001
	})
	if seen, listed := s.seen(t, "ali-c", "ga-ali"); seen >= changed || !listed {
		t.Fatalf("with the rewrite held back: stamped at %s (change at %s), ali-c listed for ga-ali: %v; want a stamp before the change and the row kept",
			when(seen), when(changed), listed)
	}
	if behind := counter(t, base, "hap_reconciler_gardener_seen_probes_total", app.SeenTableBehind); behind == 0 {
		t.Errorf("no proof counted the table behind")
	}

	unlock()
	waitFor(t, "a stamp past the change, on a table without the row", func() bool {
		seen, listed := s.seen(t, "ali-c", "ga-ali")
		if seen >= changed && listed {
			t.Fatalf("stamped at %s, after the change at %s, while ali-c is still listed for ga-ali", when(seen), when(changed))
		}
		return seen >= changed
	})
}

// serveSeen runs serve on the scene until the test ends and returns the
// base URL of its /metrics.
func (s *scene) serveSeen(t *testing.T) string {
	t.Helper()
	return s.serveDryRun(t, dryRunFlags{release: true})
}

// seen reads, in one statement and so one snapshot, the stamp (Unix
// seconds, -Inf for none) and whether binding is a candidate of ga.
func (s *scene) seen(t *testing.T, binding, ga string) (seenAt float64, listed bool) {
	t.Helper()
	err := s.db(t).QueryRow(testContext(t), `
		SELECT coalesce(extract(epoch FROM (SELECT gardener_seen_at FROM hap.candidates_computed)), '-infinity'::float8),
		       EXISTS (SELECT 1 FROM hap.binding_candidates WHERE binding_name = $1 AND global_account_id = $2)`,
		binding, ga).Scan(&seenAt, &listed)
	if err != nil {
		t.Fatal(err)
	}
	return seenAt, listed
}

// databaseNow is the database's clock, in Unix seconds.
func (s *scene) databaseNow(t *testing.T) float64 {
	t.Helper()
	var now float64
	if err := s.db(t).QueryRow(testContext(t), "SELECT extract(epoch FROM clock_timestamp())").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

func when(unix float64) string {
	if math.IsInf(unix, 0) {
		return fmt.Sprint(unix)
	}
	return time.UnixMicro(int64(unix * 1e6)).UTC().Format(time.RFC3339Nano)
}

// rewriteLockKey is the advisory lock rewrites of the candidate table take,
// derived from the schema as the store derives it (db.Store.advisoryKey).
func rewriteLockKey(schema string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("hap-reconciler/candidates-rewrite/" + schema))
	return int64(h.Sum64())
}

func gardenerClient(t *testing.T) *dynamic.DynamicClient {
	t.Helper()
	cfg := rest.CopyConfig(bed.Kube.Config())
	cfg.WarningHandler = rest.NoWarnings{}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// gauge is the value of the family name without labels, if exposed.
func gauge(t *testing.T, base, name string) (float64, bool) {
	t.Helper()
	v, ok := values(scrapeNow(t, base), name, nil)[""]
	return v, ok
}

// counter is the sample of the family name whose outcome is outcome.
func counter(t *testing.T, base, name, outcome string) float64 {
	t.Helper()
	return values(scrapeNow(t, base), name, map[string]string{"outcome": outcome})[""]
}

func scrapeNow(t *testing.T, base string) []*dto.MetricFamily {
	t.Helper()
	var f []*dto.MetricFamily
	scrapeWhen(t, base+"/metrics", "a scrape", func(got []*dto.MetricFamily) bool { f = got; return true })
	return f
}
