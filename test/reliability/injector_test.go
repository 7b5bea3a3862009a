package reliability

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
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
	postgresRestart = "postgres: restart -m immediate"
	dbCutToServer   = "postgres connections: cut mid-stream toward the server"
	dbCutToClient   = "postgres connections: cut mid-stream toward the job"
	jobKill         = "job: SIGKILL of a running run"
)

// What can happen to each API server: kube-apiserver, which every request
// of the job passes, and gardener-apiserver behind it, which serves and
// stores the Shoots and CredentialsBindings.
const (
	serverRestart = "restart"
	serverKill    = "SIGKILL and start"
	serverPause   = "SIGSTOP, then SIGCONT"
)

// serverFault names a fault of one API server, e.g.
// "gardener-apiserver: SIGKILL and start".
func serverFault(s testbed.APIServer, what string) string { return string(s) + ": " + what }

var serverFaults = func() map[string]func(ctx context.Context, in *injector) error {
	out := map[string]func(ctx context.Context, in *injector) error{}
	for _, s := range []testbed.APIServer{testbed.KubeAPIServer, testbed.GardenerAPIServer} {
		out[serverFault(s, serverRestart)] = func(ctx context.Context, _ *injector) error {
			if err := bed.Kube.StopServer(s); err != nil {
				return err
			}
			return bed.Kube.StartServer(ctx, s)
		}
		out[serverFault(s, serverKill)] = func(ctx context.Context, _ *injector) error {
			if err := bed.Kube.KillServer(s); err != nil {
				return err
			}
			return bed.Kube.StartServer(ctx, s)
		}
		out[serverFault(s, serverPause)] = func(_ context.Context, in *injector) error {
			if err := bed.Kube.PauseServer(s); err != nil {
				return err
			}
			time.Sleep(in.between(300*time.Millisecond, 2*time.Second)) // how long the node stalls: the fault itself
			return bed.Kube.ResumeServer(s)
		}
	}
	return out
}()

var faultKinds = append(append([]string{postgresRestart, cutReply, cutRequest, dbCutToServer, dbCutToClient, jobKill},
	slices.Sorted(maps.Keys(serverFaults))...), aimedFaults...)

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
	case cutReply, cutRequest:
		in.api.arm(kind)
	case dbCutToServer:
		in.db.cutLive(toServer)
	case dbCutToClient:
		in.db.cutLive(toClient)
	case jobKill:
		in.pod.kill()
	default:
		if fault, ok := serverFaults[kind]; ok {
			err = fault(ctx, in)
		} else {
			in.api.aim(kind)
		}
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
