// Package kebworkers is KEB's replicas provisioning without pause through
// the provisioning module on two pins at once -- the module of the release
// before (built from OldModuleCommit) and this tree's -- while a test
// changes the job under them: its schema migrated, rolled back and migrated
// again, by hand (test/confirm) or by the chart on a real kubelet
// (test/manifests). Each pick's answer and time, and the part of the run it
// fell in (between the test's steps or during one), make the run's
// figures; an answer KEB would fail the provisioning on, or a binding
// above KEB's limit by KEB's own count, fails the test.
package kebworkers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq" // KEB's driver
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
)

// Landscape is where KEB's replicas provision.
type Landscape struct {
	// DB is KEB's database through KEB's driver (lib/pq): KEB's instances
	// and the job's schema. DatabaseURL reaches
	// it for each replica's own pool.
	DB          *sql.DB
	DatabaseURL string
	// KEB is KEB's live path on the landscape.
	KEB *kebrules.KEB
	// Gardener and Namespace are the API server and the project the old
	// module's process confirms on.
	Gardener  *rest.Config
	Namespace string
	Pool      hap.Pool
	// Limit is KEB's limit of active instances per binding in Pool.
	Limit int
	// Request is KEB's resolve step's request for an instance of ga.
	Request func(instance, ga string) provisioning.Request
}

// Worker is one KEB replica: its pin (old or new, for the figures), the GA
// it provisions for and its module.
//
// A GA's replicas should share one pin, so that an over-filled binding is
// the module's doing: a GA served at once by the table and by KEB's live
// path, which counts no reservation, is test/differential's.
type Worker struct {
	Pin    string
	GA     string
	Module Module

	// replica is the replica's step mutex, held around KEB's claim.
	replica sync.Mutex
	// inPhase counts the provisionings completed in each phase; the driver
	// reads it.
	inPhase map[int32]int
	// active are the worker's clusters not yet deprovisioned, oldest first.
	active []string
}

// Run is one run: the landscape, the replicas, the phase (how many steps
// have ended since they started) and what every call and step took.
type Run struct {
	ctx     context.Context
	l       Landscape
	workers []*Worker
	phase   atomic.Int32
	// gaSteps are each GA's steps: the table's shared, KEB's live path's
	// exclusive (provision).
	gaSteps map[string]*sync.RWMutex

	mu    sync.Mutex
	picks []pickTaken
	steps []stepTaken
	// setupSteps ended before any worker started.
	setupSteps  int
	notes       []string
	progress    chan int // a worker's index, after each provisioning
	done        chan struct{}
	stopOnce    sync.Once
	wg          sync.WaitGroup
	instances   atomic.Int64
	failures    []error
	provisioned int
}

type pickTaken struct {
	pin        string
	start, end time.Time
	kind, err  string
}

type stepTaken struct {
	What       string `json:"what"`
	start, end time.Time
	Millis     float64 `json:"ms"`
}

// New is a run on l with no replica yet: steps taken before Start are the
// figures' comparison, the same steps without picks beside them.
func New(ctx context.Context, l Landscape) *Run {
	return &Run{ctx: ctx, l: l, gaSteps: map[string]*sync.RWMutex{}}
}

// Step does what, the test's change of the job, and records its time; a
// step taken after Start begins the next phase.
func (r *Run) Step(t *testing.T, what string, do func() error) {
	t.Helper()
	start := time.Now()
	err := do()
	end := time.Now()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	r.mu.Lock()
	r.steps = append(r.steps, stepTaken{What: what, start: start, end: end, Millis: ms(end.Sub(start))})
	r.mu.Unlock()
	if r.done != nil {
		r.phase.Add(1)
	}
}

// Note adds a line to the figures: something the test saw that is no
// failure, such as a job's run that failed and was run again.
func (r *Run) Note(s string) {
	r.mu.Lock()
	r.notes = append(r.notes, s)
	r.mu.Unlock()
}

// Start sets every worker provisioning, one provisioning after another,
// until Stop. Stop runs at the test's end at the latest, before the
// cleanups of the modules registered before Start.
func (r *Run) Start(t *testing.T, workers ...*Worker) {
	r.workers, r.setupSteps = workers, len(r.steps)
	r.progress, r.done = make(chan int, 64), make(chan struct{})
	for _, w := range workers {
		if r.gaSteps[w.GA] == nil {
			r.gaSteps[w.GA] = &sync.RWMutex{}
		}
	}
	for i, w := range workers {
		w.inPhase = map[int32]int{}
		r.wg.Go(func() { r.work(i, w) })
	}
	t.Cleanup(r.stopWorkers)
}

func (r *Run) work(i int, w *Worker) {
	for {
		select {
		case <-r.done:
			return
		default:
		}
		phase := r.phase.Load()
		err := r.provision(w)
		r.mu.Lock()
		if err != nil {
			r.failures = append(r.failures, fmt.Errorf("%s module, %s: %w", w.Pin, w.GA, err))
		}
		w.inPhase[phase]++
		r.provisioned++
		r.mu.Unlock()
		// The driver looks again after each receive: a full buffer holds
		// wake-ups enough, and a worker never waits for the driver, which
		// is busy with a step.
		select {
		case r.progress <- i:
		default:
		}
	}
}

// WaitProvisioned returns once every worker has completed n provisionings
// that began in the current phase; a worker's failure stops the run and
// fails the test.
func (r *Run) WaitProvisioned(t *testing.T, n int) {
	t.Helper()
	phase := r.phase.Load()
	for {
		r.mu.Lock()
		ready := !slices.ContainsFunc(r.workers, func(w *Worker) bool { return w.inPhase[phase] < n })
		failures := errors.Join(r.failures...)
		r.mu.Unlock()
		if failures != nil {
			r.Stop(t)
		}
		if ready {
			return
		}
		select {
		case <-r.progress:
		case <-r.ctx.Done():
			r.stopWorkers()
			t.Fatalf("phase %d: %v before every worker provisioned %d times", phase, r.ctx.Err(), n)
		}
	}
}

// Stop ends the workers and fails the test with their errors.
func (r *Run) Stop(t *testing.T) {
	t.Helper()
	r.stopWorkers()
	if err := errors.Join(r.failures...); err != nil {
		t.Fatalf("phase %d: %v", r.phase.Load(), err)
	}
}

func (r *Run) stopWorkers() {
	if r.done == nil {
		return
	}
	r.stopOnce.Do(func() { close(r.done) })
	r.wg.Wait()
}

// CountsOf is KEB's count of ga's active instances per binding now.
func CountsOf(ctx context.Context, db *sql.DB, ga string) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT subscription_secret_name, count(*) FROM instances
		WHERE global_account_id = $1 AND subscription_secret_name <> '' AND deleted_at = '0001-01-01 00:00:00+00'
		GROUP BY subscription_secret_name`, ga)
	if err != nil {
		return nil, err
	}
	return kebrules.ScanCounts(rows)
}

// CheckLimits fails the test for every binding above KEB's limit by KEB's
// count of the workers' GAs now.
func (r *Run) CheckLimits(t *testing.T) {
	t.Helper()
	for ga := range r.gaSteps {
		counts, err := CountsOf(r.ctx, r.l.DB, ga)
		if err != nil {
			t.Fatal(err)
		}
		for binding, n := range counts {
			if n > r.l.Limit {
				t.Errorf("%s holds %d of %s's active instances, above KEB's limit %d", binding, n, ga, r.l.Limit)
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
