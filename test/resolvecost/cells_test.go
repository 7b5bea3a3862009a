package resolvecost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/bench"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// The columns of a cell, asked in turn for the same request.
const (
	pathLive      = iota // KEB's live path
	pathTable            // the adopted step confirmed: NextBinding, Gardener's confirmation, then the update
	pathTrusted          // the adopted step on a table serve has seen Gardener for: NextBinding, then the update
	pathStatement        // the table's statement alone (Propose)
	paths
)

var pathNames = [paths]string{"live", "table", "trusted", "statement"}

// sample is one timed pick.
type sample struct {
	path  int
	req   request
	took  time.Duration
	began time.Time // when the timed part started
	bytes int64
	// gardener is the time inside KEB's Gardener client's calls, update
	// the time of KEB's instance update: the parts of took that are not
	// the database's choice.
	gardener, update time.Duration
	cpu              float64 // API servers' CPU seconds around the pick; quiet cells only
	binding          string
	claimNew         bool
	// timedOut: a call hit KEB's 10 s timeout or the client's; failed:
	// any other error. Both are counted, neither ends the cell.
	timedOut, failed bool
	// fellBack: NextBinding sent KEB to its live path, which was then
	// taken and timed as part of the pick.
	fellBack bool
	err      error
}

// cellSpec is one cell: a pool kind and a number of workers, each making
// rounds rounds of the paths for one request.
type cellSpec struct {
	shared  bool
	workers int
	rounds  int // per worker
	warmUp  int // unmeasured rounds per worker
	// idle is the database pool's idle connections during the cell; 0
	// keeps KEB's default (kebMaxIdleConns).
	idle int
}

// idleConns is the pool's idle connections in the cell.
func (c cellSpec) idleConns() int {
	if c.idle > 0 {
		return c.idle
	}
	return kebMaxIdleConns
}

func (c cellSpec) poolKind() string {
	if c.shared {
		return "shared"
	}
	return "dedicated"
}

// pick makes one pick of path for r as KEB's resolve step makes it, from
// the instance row created at the provision request (not timed) to the
// update of the row with the chosen binding (timed, on the live path and
// the adopted step; the statement alone is timed without it).
func (w *world) pick(ctx context.Context, path int, r request, readCPU bool) (sample, error) {
	s := sample{path: path, req: r}
	id, err := w.requested(ctx, r.ga)
	if err != nil {
		return s, fmt.Errorf("create the instance row: %w", err)
	}
	var spent counters
	pctx := withCounters(ctx, &spent)
	var cpuBefore bench.Seconds
	if readCPU {
		cpuBefore = bench.ServerCPU(bed.Kube.PIDs())
	}
	start := time.Now()
	s.began = start
	var stepErr error
	switch path {
	case pathLive:
		s.binding, s.claimNew, stepErr = w.live(pctx, r)
		if stepErr == nil && s.binding != "" {
			s.update, stepErr = w.timedPlaced(pctx, id, s.binding)
		}
	case pathTable, pathTrusted:
		client := w.client
		if path == pathTrusted {
			client = w.trusted
		}
		var p provisioning.Pick
		p, stepErr = client.NextBinding(pctx, r.tableRequest(id))
		switch {
		case provisioning.LivePath(stepErr):
			s.fellBack = true
			s.err = stepErr
			s.binding, s.claimNew, stepErr = w.live(pctx, r)
		default:
			s.binding, s.claimNew = p.Binding, p.ClaimNew
		}
		if stepErr == nil && s.binding != "" {
			s.update, stepErr = w.timedPlaced(pctx, id, s.binding)
		}
	case pathStatement:
		var p provisioning.Pick
		p, stepErr = w.client.Propose(pctx, r.tableRequest(id))
		s.binding, s.claimNew = p.Binding, p.ClaimNew
	}
	s.took = time.Since(start)
	if readCPU {
		s.cpu = float64(bench.ServerCPU(bed.Kube.PIDs()) - cpuBefore)
	}
	s.bytes, s.gardener = spent.bytes.Load(), time.Duration(spent.gardener.Load())
	if stepErr != nil {
		s.err = stepErr
		if errors.Is(stepErr, context.DeadlineExceeded) {
			s.timedOut = true
		} else {
			s.failed = true
		}
	}
	// Untimed: the statement's reservation placed as KEB would place it,
	// and a ClaimNew's claim given up (KEB would claim; no measured path
	// includes the claim), so that the next request is not held by it.
	switch {
	case path == pathStatement && s.binding != "":
		if err := w.placed(ctx, id, s.binding); err != nil {
			return s, err
		}
	case (path == pathTable || path == pathTrusted) && s.claimNew && !s.fellBack:
		if err := w.client.AbandonClaim(ctx, r.tableRequest(id)); err != nil {
			return s, err
		}
	}
	return s, nil
}

func (w *world) timedPlaced(ctx context.Context, id, binding string) (time.Duration, error) {
	began := time.Now()
	err := w.placed(ctx, id, binding)
	return time.Since(began), err
}

// live is KEB's live path for r (test/kebrules states it): dedicated,
// resolveWithMultiAccountSupport of
// internal/process/provisioning/resolve_credentials_binding.go, the LIST
// by BuildForTenantMatching's selector and one GetInstanceCountPerBinding
// (internal/storage/postsql/read.go), then the most populated binding below
// the limit; shared, the LIST of the pool's shared bindings and
// GetLeastUsedCredentialsBindingFromSecretBindings (common/gardener/client.go),
// which lists every shoot of the namespace, unpaged.
func (w *world) live(ctx context.Context, r request) (binding string, claimNew bool, err error) {
	var v kebrules.Verdict
	if r.shared {
		v, err = w.keb.Shared(ctx, r.pool)
	} else {
		v, err = w.keb.Dedicated(ctx, r.ga, r.pool)
	}
	return v.Binding, v.ClaimNew, err
}

// cellRun is what one cell measured.
type cellRun struct {
	samples    []sample
	wall       time.Duration
	loadBefore string
	loadAfter  string
}

// runCell has spec.workers workers each make spec.rounds rounds; a round is
// the paths for one request, one after the other, in an order that
// changes from round to round (roundOrder).
//
// The workers take each path together: a round is one phase per path, in
// which every worker makes its pick of that path, and the next phase starts
// when all of them are done. So a path is timed with the other workers on
// the same path, as KEB's workers run with the switch on and with it off;
// were each worker to alternate on its own, a pick of the table would be
// timed beside seven live paths' load on the API servers and PostgreSQL,
// which no KEB ever sees. Between phases the collector runs to its end
// (untimed), so that the garbage of one path, the live path's decoded
// lists above all, is not collected on the next path's time.
func (w *world) runCell(ctx context.Context, spec cellSpec, reqs []request) (cellRun, error) {
	w.db.SetMaxIdleConns(spec.idleConns())
	defer w.db.SetMaxIdleConns(kebMaxIdleConns)
	run := cellRun{loadBefore: loadAverage()}
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for i := range spec.warmUp + spec.rounds {
		for _, path := range roundOrder(i) {
			runtime.GC()
			var wg sync.WaitGroup
			for k := range spec.workers {
				r := reqs[(k*(spec.warmUp+spec.rounds)+i)%len(reqs)]
				wg.Go(func() {
					s, err := w.pick(ctx, path, r, spec.workers == 1)
					mu.Lock()
					defer mu.Unlock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if i >= spec.warmUp {
						run.samples = append(run.samples, s)
					}
				})
			}
			wg.Wait()
			if firstErr != nil {
				run.wall = time.Since(start)
				return run, firstErr
			}
		}
	}
	run.wall = time.Since(start)
	run.loadAfter = loadAverage()
	return run, nil
}

// roundOrders are the orders of the paths in successive rounds: every path
// goes first once in four rounds and follows every other path once
// (a Williams design), so whatever a path leaves behind (a warm cache, a
// connection, load on the API servers) falls on each of the others alike.
var roundOrders = [paths][paths]int{
	{pathLive, pathTable, pathStatement, pathTrusted},
	{pathTable, pathTrusted, pathLive, pathStatement},
	{pathTrusted, pathStatement, pathTable, pathLive},
	{pathStatement, pathLive, pathTrusted, pathTable},
}

func roundOrder(round int) [paths]int { return roundOrders[round%paths] }

// loadAverage is the machine's load average over 1, 5 and 15 minutes.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// pathFigures summarise one path's picks in a cell.
type pathFigures struct {
	Picks     int     `json:"picks"`
	P50       float64 `json:"p50Millis"`
	P99       float64 `json:"p99Millis"`
	Max       float64 `json:"maxMillis"`
	Timeouts  int     `json:"timeouts"`
	Failures  int     `json:"failures"`
	FellBack  int     `json:"fellBackToLivePath,omitempty"`
	ClaimNew  int     `json:"claimNew,omitempty"`
	KBPerPick float64 `json:"kbReadPerPick"`
	// GardenerP50 and UpdateP50: the median time inside KEB's Gardener
	// client's calls and of KEB's instance update; the rest of a pick is
	// the database's choice (KEB's count, or the table's statement).
	GardenerP50 float64 `json:"gardenerCallsP50Millis"`
	UpdateP50   float64 `json:"instanceUpdateP50Millis"`
	RestP50     float64 `json:"restP50Millis"`
	// ServerCPUMillisPerPick: etcd's, kube-apiserver's and
	// gardener-apiserver's CPU, read from /proc around each pick; quiet
	// cells only (with workers the picks overlap).
	ServerCPUMillisPerPick float64 `json:"serverCPUMillisPerPick,omitempty"`
	FirstError             string  `json:"firstError,omitempty"`
}

func summarise(samples []sample, path int) pathFigures {
	var f pathFigures
	var took, gardener, update, rest []time.Duration
	var bytes int64
	var cpu float64
	for _, s := range samples {
		if s.path != path {
			continue
		}
		f.Picks++
		took = append(took, s.took)
		gardener, update = append(gardener, s.gardener), append(update, s.update)
		rest = append(rest, s.took-s.gardener-s.update)
		bytes += s.bytes
		cpu += s.cpu
		switch {
		case s.timedOut:
			f.Timeouts++
		case s.failed:
			f.Failures++
		}
		if s.fellBack {
			f.FellBack++
		}
		if s.claimNew {
			f.ClaimNew++
		}
		if s.err != nil && f.FirstError == "" {
			f.FirstError = s.err.Error()
		}
	}
	if f.Picks == 0 {
		return f
	}
	f.P50, f.P99 = testbed.QuantileMillis(took, 0.5), testbed.QuantileMillis(took, 0.99)
	f.Max = testbed.QuantileMillis(took, 1)
	f.GardenerP50, f.UpdateP50 = testbed.QuantileMillis(gardener, 0.5), testbed.QuantileMillis(update, 0.5)
	f.RestP50 = testbed.QuantileMillis(rest, 0.5)
	f.KBPerPick = round1(float64(bytes) / float64(f.Picks) / 1024)
	f.ServerCPUMillisPerPick = round1(cpu * 1000 / float64(f.Picks))
	return f
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
