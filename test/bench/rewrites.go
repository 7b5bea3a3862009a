package bench

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// RewriteLoad is the load of the picks-during-rewrites measurement: as many
// bindings as a large landscape has, concurrent pickers, and a rewrite of
// the candidate table every few seconds that changes a share of the rows.
type RewriteLoad struct {
	Bindings      int     `json:"bindings"`
	Pickers       int     `json:"pickers"`
	Every         Seconds `json:"rewriteEverySeconds"`
	ChangedShare  float64 `json:"changedShare"`
	Duration      Seconds `json:"durationSeconds"`
	Rewrites      int     `json:"rewrites"`
	RewriteMedian Millis  `json:"rewriteMedianMillis"`
}

// PickTail is the latency of one kind of pick, with the far tail.
type PickTail struct {
	Picks int    `json:"picks"`
	P50   Millis `json:"p50Millis"`
	P99   Millis `json:"p99Millis"`
	P999  Millis `json:"p999Millis"`
	Max   Millis `json:"maxMillis"`
}

// PicksUnderRewrites is the measurement: picks that started while a rewrite
// was open, and the others.
type PicksUnderRewrites struct {
	Load    RewriteLoad `json:"load"`
	During  PickTail    `json:"duringRewrites"`
	Outside PickTail    `json:"outsideRewrites"`
	// OverTarget counts picks that took longer than 50 ms, for whatever
	// reason (on 2 shared cores, mostly waiting for a core).
	OverTarget int `json:"picksOver50Millis"`
	// LockWaits are the lock waits PostgreSQL logged (log_lock_waits, with
	// deadlock_timeout 20 ms): how many, how many longer than the 50 ms a
	// pick may wait for the job, and the longest.
	LockWaits       int    `json:"lockWaitsOver20Millis"`
	LockWaitsOver50 int    `json:"lockWaitsOver50Millis"`
	LongestLockWait Millis `json:"longestLockWaitMillis"`
}

// measurePicksUnderRewrites runs pickers against the candidate table of a
// fresh schema while the table is rewritten, as the candidates job does.
func measurePicksUnderRewrites(ctx context.Context, w *testbed.World, serverLog string, load RewriteLoad) (PicksUnderRewrites, error) {
	const schema = "hap_rewrites"
	databaseURL := w.DatabaseURL
	// Every connection to the world's database logs a lock wait longer
	// than 20 ms, and how long it took once it got the lock.
	setup, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return PicksUnderRewrites{}, err
	}
	for _, setting := range []string{"log_lock_waits = on", "deadlock_timeout = '20ms'"} {
		if _, err := setup.ExecContext(ctx, fmt.Sprintf("ALTER DATABASE %q SET %s", w.DatabaseName, setting)); err != nil {
			_ = setup.Close()
			return PicksUnderRewrites{}, fmt.Errorf("log lock waits: %w", err)
		}
	}
	_ = setup.Close()
	logStart, err := fileSize(serverLog)
	if err != nil {
		return PicksUnderRewrites{}, err
	}
	store, err := db.Open(ctx, databaseURL, db.Options{Schema: schema, MaxOpenConns: 4})
	if err != nil {
		return PicksUnderRewrites{}, err
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		return PicksUnderRewrites{}, err
	}
	keb, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return PicksUnderRewrites{}, err
	}
	defer keb.Close()
	keb.SetMaxOpenConns(load.Pickers + 1)

	rng := rand.New(rand.NewPCG(7, 7))
	rows := syntheticCandidates(load.Bindings, rng)
	if err := store.ReplaceCandidates(ctx, rows, nil, time.Now(), time.Hour); err != nil {
		return PicksUnderRewrites{}, err
	}

	var rewriting atomic.Bool
	var rewriteTimes []time.Duration
	ctx, cancel := context.WithTimeout(ctx, time.Duration(float64(load.Duration)*float64(time.Second)))
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	var rewriteErr error
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Duration(float64(load.Every) * float64(time.Second)))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			changeShare(rows, load.ChangedShare, rng)
			rewriting.Store(true)
			start := time.Now()
			err := store.ReplaceCandidates(context.WithoutCancel(ctx), rows, nil, time.Now(), time.Hour)
			rewriteTimes = append(rewriteTimes, time.Since(start))
			rewriting.Store(false)
			if err != nil {
				rewriteErr = err
				return
			}
		}
	}()

	type sample struct {
		took   time.Duration
		during bool
	}
	// One client for every picker, as a KEB replica has; its timeout does
	// not bound the picks measured.
	table := &provisioning.Client{DB: keb, Schema: schema, Timeout: time.Hour}
	samples := make([][]sample, load.Pickers)
	errs := make([]error, load.Pickers)
	groups := groupsOf(rows)
	for p := range load.Pickers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each picker has groups of its own, so a picker waits for a
			// lock only when the rewrite holds it, never for another pick.
			r := rand.New(rand.NewPCG(uint64(p), 11))
			mine := len(groups) / load.Pickers
			for i := 0; ctx.Err() == nil; i++ {
				g := groups[p+load.Pickers*r.IntN(mine)]
				during := rewriting.Load()
				start := time.Now()
				_, err := table.Propose(context.WithoutCancel(ctx), provisioning.Request{
					InstanceID: fmt.Sprintf("rw-%d-%d", p, i), GlobalAccountID: g.GlobalAccountID, HyperscalerType: g.Pool.HyperscalerType})
				took := time.Since(start)
				if err != nil {
					errs[p] = err
					return
				}
				samples[p] = append(samples[p], sample{took, during || rewriting.Load()})
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(append(errs, rewriteErr, table.Close())...); err != nil {
		return PicksUnderRewrites{}, err
	}
	var during, outside []time.Duration
	res := PicksUnderRewrites{Load: load}
	for _, ps := range samples {
		for _, s := range ps {
			if s.took > 50*time.Millisecond {
				res.OverTarget++
			}
			if s.during {
				during = append(during, s.took)
			} else {
				outside = append(outside, s.took)
			}
		}
	}
	res.During, res.Outside = tailOf(during), tailOf(outside)
	if res.LockWaits, res.LockWaitsOver50, res.LongestLockWait, err = lockWaits(serverLog, logStart); err != nil {
		return PicksUnderRewrites{}, err
	}
	res.Load.Rewrites = len(rewriteTimes)
	if len(rewriteTimes) > 0 {
		slices.Sort(rewriteTimes)
		res.Load.RewriteMedian = millis(rewriteTimes[len(rewriteTimes)/2])
	}
	return res, nil
}

// syntheticCandidates is n bindings of GAs holding one to four each, with
// limits and counts a busy landscape has.
func syntheticCandidates(n int, rng *rand.Rand) []hap.Candidate {
	rows := make([]hap.Candidate, 0, n)
	for ga := 0; len(rows) < n; ga++ {
		for rank := 1; rank <= 1+rng.IntN(4) && len(rows) < n; rank++ {
			limit := 1000000 // picks never fill a binding during the measurement
			count := rng.IntN(100)
			headroom := limit - count
			rows = append(rows, hap.Candidate{GlobalAccountID: fmt.Sprintf("ga-%05d", ga), Pool: hap.Pool{HyperscalerType: "aws"},
				BindingName: fmt.Sprintf("rw-%05d-%d", ga, rank), DBCount: count, EffectiveCount: count,
				Limit: &limit, Headroom: &headroom, Selectable: true, Rank: rank})
		}
	}
	return rows
}

// changeShare moves the counts of a share of the rows, as clusters come
// and go between two runs.
func changeShare(rows []hap.Candidate, share float64, rng *rand.Rand) {
	for i := range rows {
		if rng.Float64() < share {
			rows[i].DBCount++
			rows[i].EffectiveCount++
			h := *rows[i].Limit - rows[i].EffectiveCount
			rows[i].Headroom = &h
		}
	}
}

func groupsOf(rows []hap.Candidate) []hap.Candidate {
	var out []hap.Candidate
	for _, r := range rows {
		if r.Rank == 1 {
			out = append(out, r)
		}
	}
	return out
}

func tailOf(took []time.Duration) PickTail {
	if len(took) == 0 {
		return PickTail{}
	}
	slices.Sort(took)
	at := func(q float64) Millis { return millis(took[min(len(took)-1, int(q*float64(len(took))))]) }
	return PickTail{Picks: len(took), P50: at(0.50), P99: at(0.99), P999: at(0.999), Max: millis(took[len(took)-1])}
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// acquiredAfter matches PostgreSQL's log line for a lock wait that ended:
// "process 123 acquired ShareLock on transaction 456 after 73.210 ms".
var acquiredAfter = regexp.MustCompile(`acquired \S+ on .* after ([0-9.]+) ms`)

// lockWaits reads the lock waits logged from offset on.
func lockWaits(path string, offset int64) (count, over50 int, longest Millis, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, 0, 0, err
	}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		m := acquiredAfter.FindStringSubmatch(lines.Text())
		if m == nil {
			continue
		}
		ms, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		count++
		if ms > 50 {
			over50++
		}
		longest = max(longest, Millis(ms))
	}
	return count, over50, longest, lines.Err()
}
