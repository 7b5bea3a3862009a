package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// injector hits the trial with a fault every 0.6 to 2.5 s, chosen by the
// trial's seed. The schedule is fault injection, not synchronisation:
// nothing waits for a fault to have happened except the trial's count of
// them. Each fault leaves the servers up when it returns (a restart
// includes the start, a pause its resume), so stopping the injector leaves
// a healthy bed.
type injector struct {
	rng *rand.Rand
	api *apiProxy
	db  *tcpProxy
	pod *binaryPod

	mu     sync.Mutex
	counts map[string]int
	errs   []error
}

// Faults that are not aimed at a release.
const (
	postgresRestart  = "postgres: restart -m immediate"
	apiserverRestart = "apiserver: restart"
	apiserverKill    = "apiserver: SIGKILL and start"
	apiserverPause   = "apiserver: SIGSTOP, then SIGCONT"
	dbCutToServer    = "postgres connections: cut mid-stream toward the server"
	dbCutToClient    = "postgres connections: cut mid-stream toward the job"
	jobKill          = "job: SIGKILL of a running run"
)

var faultKinds = append([]string{postgresRestart, apiserverRestart, apiserverKill, apiserverPause,
	cutReply, cutRequest, dbCutToServer, dbCutToClient, jobKill}, aimedFaults...)

func newInjector(seed uint64, api *apiProxy, db *tcpProxy, pod *binaryPod) *injector {
	return &injector{rng: rand.New(rand.NewPCG(seed, 13)), api: api, db: db, pod: pod, counts: map[string]int{}}
}

// start injects faults until the returned function is called; that
// function waits for the fault under way to finish.
func (in *injector) start(ctx context.Context) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(in.between(600*time.Millisecond, 2500*time.Millisecond)):
			}
			in.inject(ctx, faultKinds[in.rng.IntN(len(faultKinds))])
		}
	}()
	return func() {
		close(stop)
		<-done
	}
}

func (in *injector) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(in.rng.Int64N(int64(hi-lo)))
}

func (in *injector) inject(ctx context.Context, kind string) {
	var err error
	switch kind {
	case postgresRestart:
		err = restartPostgres(ctx)
	case apiserverRestart:
		if err = bed.Kube.StopAPIServer(); err == nil {
			err = bed.Kube.StartAPIServer(ctx)
		}
	case apiserverKill:
		if err = bed.Kube.KillAPIServer(); err == nil {
			err = bed.Kube.StartAPIServer(ctx)
		}
	case apiserverPause:
		if err = bed.Kube.PauseAPIServer(); err == nil {
			time.Sleep(in.between(300*time.Millisecond, 2*time.Second)) // how long the node stalls: the fault itself
			err = bed.Kube.ResumeAPIServer()
		}
	case cutReply, cutRequest:
		in.api.arm(kind)
	case dbCutToServer:
		in.db.cutLive(toServer)
	case dbCutToClient:
		in.db.cutLive(toClient)
	case jobKill:
		in.pod.kill()
	default:
		in.api.aim(kind)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.counts[kind]++
	if err != nil {
		in.errs = append(in.errs, fmt.Errorf("%s: %w", kind, err))
	}
}

// postgresRestarts keeps the injector's restarts and the aimed ones from
// overlapping: two at once would fight over the server's port.
var postgresRestarts sync.Mutex

func restartPostgres(ctx context.Context) error {
	postgresRestarts.Lock()
	defer postgresRestarts.Unlock()
	return bed.Postgres.Restart(ctx)
}

func (in *injector) total() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, c := range in.counts {
		n += c
	}
	return n
}
