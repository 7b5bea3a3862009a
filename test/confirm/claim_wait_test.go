package confirm

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	waitRun    = flag.Bool("claim.wait", false, "measure the wait for another worker's claim (make claim-wait)")
	waitRounds = flag.Int("claim.wait.rounds", 20, "bursts per number of workers")
	waitOut    = flag.String("claim.wait.out", "", "write the figures as JSON to this file")
)

// waitFigure is one number of workers' bursts.
type waitFigure struct {
	Workers int `json:"workers"`
	Bursts  int `json:"bursts"`
	// Claims are the accounts claimed in all, Needed one per limit reached.
	Claims int `json:"accountsClaimed"`
	Needed int `json:"accountsNeeded"`
	// Waited: the picks that waited for another worker's claim in KEB's
	// queue (the retry intervals ErrClaimPending asked for), and their wait
	// and whole resolve step (every try, claim, record) in milliseconds.
	Waited        int     `json:"picksThatWaited"`
	WaitP50Millis float64 `json:"waitP50Millis"`
	WaitP99Millis float64 `json:"waitP99Millis"`
	StepP50Millis float64 `json:"stepP50Millis"`
	StepP99Millis float64 `json:"stepP99Millis"`
}

// TestClaimWaitCost measures what the claim's lease costs KEB's workers:
// bursts of 8 and 20 workers on two replicas for one GA whose bindings are
// all at their limit, each worker's resolve step as the adoption guide
// writes it, on the real gardener-apiserver and PostgreSQL. Before each
// burst every binding of the GA is filled to the limit in KEB's table, so
// each burst starts from the same state. Figures, not assertions
// (docs/benchmarks.md); the two sizes alternate so the machine's load falls
// on both alike.
func TestClaimWaitCost(t *testing.T) {
	if !*waitRun {
		t.Skip("a measurement: make claim-wait")
	}
	sizes := []int{8, 20}
	l := landscape.New(10)
	l.AddBinding(landscape.BindingSpec{Name: "aws-full", Pool: awsPool, GlobalAccountID: "ga-1"})
	for _, n := range sizes {
		for range *waitRounds * ((n + kebLimit - 1) / kebLimit) {
			l.AddBinding(landscape.BindingSpec{Pool: awsPool})
		}
	}
	s := newScene(t, l)
	for range kebLimit {
		s.placed("ga-1", "aws-full")
	}
	s.computeTable()
	replicas := []*replica{s.replica(s.client), s.replica(s.openClient())}

	type samples struct{ waits, steps []time.Duration }
	got := map[int]*samples{}
	figures := map[int]*waitFigure{}
	for _, n := range sizes {
		got[n], figures[n] = &samples{}, &waitFigure{Workers: n}
	}
	for range *waitRounds {
		for _, n := range sizes {
			s.fillToTheLimit("ga-1")
			burst := s.atOnce(n, "ga-1", func(i int, id string) provisioned {
				began := time.Now()
				p := s.provisionOnTheTable(replicas[i%2], id, "ga-1")
				p.took = time.Since(began)
				return p
			})
			for binding, placed := range s.countsOf("ga-1") {
				if placed > kebLimit {
					t.Errorf("%s holds %d of ga-1's clusters after a burst of %d, above KEB's limit %d", binding, placed, n, kebLimit)
				}
			}
			f := figures[n]
			f.Bursts++
			f.Claims += burst.claims
			f.Needed += (n + kebLimit - 1) / kebLimit
			got[n].waits = append(got[n].waits, burst.waits...)
			got[n].steps = append(got[n].steps, burst.waitedSteps...)
		}
	}
	var out []waitFigure
	for _, n := range sizes {
		f := figures[n]
		f.Waited = len(got[n].waits)
		f.WaitP50Millis, f.WaitP99Millis = testbed.QuantileMillis(got[n].waits, 0.5), testbed.QuantileMillis(got[n].waits, 0.99)
		f.StepP50Millis, f.StepP99Millis = testbed.QuantileMillis(got[n].steps, 0.5), testbed.QuantileMillis(got[n].steps, 0.99)
		out = append(out, *f)
	}
	text, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the wait for another worker's claim:\n%s", text)
	if *waitOut != "" {
		if err := os.WriteFile(*waitOut, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fillToTheLimit fills every binding of ga's in the aws pool to KEB's limit
// with active instances, as if its clusters had been placed.
func (s *scene) fillToTheLimit(ga string) {
	s.t.Helper()
	for binding, n := range s.countsOf(ga) {
		for range kebLimit - n {
			s.placed(ga, binding)
		}
	}
}
