package differential

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/provisioning"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// stream is the seeded sequence of KEB's actions, with the job's runs
// interleaved by runJob.
type stream struct {
	*world
	rng   *rand.Rand
	tally *tally
	// runJob runs the candidates job once, CronJob-style; nil while serve
	// runs it on its own.
	runJob func(ctx context.Context) error
	phase  string
	// soak keeps the landscape as it is, as a soak needs (soak_test.go):
	// no binding is added, and KEB removes the rows of the instances it
	// deprovisioned.
	soak bool
}

// action is one kind of step and its weight.
type action struct {
	name   string
	weight int
	do     func(ctx context.Context) error
}

// step does one action chosen by weight. Deprovisioning grows with the
// number of active clusters, so the population settles instead of
// draining the pools.
func (s *stream) step(ctx context.Context) error {
	actions := s.actions()
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	n := s.rng.IntN(total)
	for _, a := range actions {
		if n < a.weight {
			started := time.Now()
			err := a.do(ctx)
			s.tally.SecondsByAction[a.name] += time.Since(started).Seconds()
			return err
		}
		n -= a.weight
	}
	panic("unreachable")
}

// actions are the kinds of step with their weights. A soak's stream adds
// no binding (its tables' bounds follow from the landscape) and removes
// the instances KEB has finished with, as KEB's deprovisioning does.
func (s *stream) actions() []action {
	actions := []action{
		{"request", 20, s.newRequest},
		{"resolve", 26, s.resolvePending},
		{"shared pick", 7, s.sharedPick},
		{"live placement", 6, s.livePlacement},
		{"deprovision", 5 + len(s.active), s.deprovisionOne},
		{"cleanup", 8, s.cleanupOne},
		{"workers at once", 3, s.workersAtOnce},
		{"operator retires", 1, s.operatorRetires},
	}
	if s.soak {
		actions = append(actions, action{"remove finished instances", 2, s.removeFinished})
	} else {
		actions = append(actions, action{"shared pool grows", 1, s.sharedPoolGrows})
	}
	if s.runJob != nil {
		actions = append(actions, action{"job run", 3, s.jobRun})
	}
	return actions
}

// The GAs, weighted so that some fill several bindings. ga-2 holds two
// internal bindings (KEB's guard of 2 applies once they are empty); ga-8
// is off the allowlist.
var (
	globalAccounts = []string{"ga-1", "ga-2", "ga-3", "ga-4", "ga-5", "ga-6", "ga-7", "ga-8"}
	gaWeights      = []int{5, 1, 4, 3, 2, 2, 1, 2}
	awsPool        = hap.Pool{HyperscalerType: "aws"}
	awsEUPool      = hap.Pool{HyperscalerType: "aws", EUAccess: true}
	sharedPool     = hap.Pool{HyperscalerType: "openstack_eu-de-1"}
	// emptySharedPool has no binding: KEB fails such a provisioning.
	emptySharedPool = hap.Pool{HyperscalerType: "openstack_eu-de-1", EUAccess: true}
)

func (s *stream) chooseGA() string {
	total := 0
	for _, w := range gaWeights {
		total += w
	}
	n := s.rng.IntN(total)
	for i, w := range gaWeights {
		if n < w {
			return globalAccounts[i]
		}
		n -= w
	}
	panic("unreachable")
}

func (s *stream) choosePool() hap.Pool {
	if s.rng.IntN(4) == 0 {
		return awsEUPool
	}
	return awsPool
}

// newRequest is a provision request whose resolve step comes later.
func (s *stream) newRequest(ctx context.Context) error {
	c, err := s.request(ctx, s.chooseGA(), s.choosePool(), false)
	if err != nil {
		return err
	}
	s.pending = append(s.pending, c)
	return nil
}

// resolvePending is KEB's resolve step for one waiting request, or for a
// request made just now when none waits.
func (s *stream) resolvePending(ctx context.Context) error {
	if len(s.pending) == 0 {
		if err := s.newRequest(ctx); err != nil {
			return err
		}
	}
	i := s.rng.IntN(len(s.pending))
	c := s.pending[i]
	s.pending = append(s.pending[:i], s.pending[i+1:]...)
	return s.tablePick(ctx, c)
}

// requestFor is the Request KEB's resolve step builds, with KEB's
// multi-account decision for the runtime (provider aws).
func (s *stream) requestFor(c *cluster) provisioning.Request {
	req := provisioning.Request{InstanceID: c.instanceID, GlobalAccountID: c.ga,
		HyperscalerType: c.pool.HyperscalerType, EUAccess: c.pool.EUAccess, ProviderType: kebProvider,
		Account: provisioning.AccountFor(s.keb.Config, s.keb.Config.MinBindingsForGuard, c.ga, kebProvider)}
	if c.shared {
		// The stream's shared pools are openstack's.
		req.GlobalAccountID, req.ProviderType = "", "openstack"
	}
	return req
}

// oracle is KEB's answer on the live state now.
func (s *stream) oracle(ctx context.Context, c *cluster) (kebrules.Verdict, error) {
	if c.shared {
		return s.keb.Shared(ctx, c.pool)
	}
	return s.keb.Dedicated(ctx, c.ga, c.pool)
}

// tablePick asks the table, compares with KEB at the same moment and acts
// on the table's answer as KEB's resolve step does.
func (s *stream) tablePick(ctx context.Context, c *cluster) error {
	req := s.requestFor(c)
	before, err := s.excessOfGroup(ctx, c)
	if err != nil {
		return err
	}
	got, err := s.client.NextBinding(ctx, req)
	at := time.Now()
	want, werr := s.oracle(ctx, c)
	if werr != nil {
		return werr
	}
	pc := pickCase{c: c, got: got, err: err, want: want, at: at, excessBefore: before}
	if err := s.record(ctx, pc); err != nil {
		return err
	}
	return s.act(ctx, pc, req)
}

// record judges a pick and counts it.
func (s *stream) record(ctx context.Context, pc pickCase) error {
	outcome, err := s.judge(ctx, pc)
	if err != nil {
		return err
	}
	s.note("pick %s ga=%s pool=%s shared=%t: table %s, KEB %s %v limit %d: %s",
		pc.c.instanceID, pc.c.ga, pc.c.pool, pc.c.shared, pc.answer(), pc.want, pc.want.Counts, pc.want.Limit, outcome)
	s.tally.add(s.phase, outcome, func() string {
		return fmt.Sprintf("seed %d, action %d, pick of %s (ga %s, pool %s, shared %t): table %s, KEB %s (held %v, counts %v, limit %d)%s",
			s.tally.Seed, len(s.log), pc.c.instanceID, pc.c.ga, pc.c.pool, pc.c.shared, pc.answer(), pc.want,
			pc.want.Held, pc.want.Counts, pc.want.Limit, s.evidence(ctx, pc))
	})
	return nil
}

// act is what KEB's resolve step does with the table's answer.
func (s *stream) act(ctx context.Context, pc pickCase, req provisioning.Request) error {
	switch {
	case errors.Is(pc.err, provisioning.ErrGuarded):
		return s.fail(ctx, pc.c, pc.err.Error())
	case provisioning.LivePath(pc.err):
		return s.live(ctx, pc.c, pc.want)
	case pc.got.ClaimNew && pc.c.shared:
		return s.fail(ctx, pc.c, "ClaimNew for a shared pool")
	case pc.got.ClaimNew:
		return s.claimAndPlace(ctx, pc.c, &req)
	}
	return s.place(ctx, pc.c, pc.got.Binding)
}

// live is KEB's live path: its rules on the live state, a claim made
// without RecordClaim (the table was not asked).
func (s *stream) live(ctx context.Context, c *cluster, want kebrules.Verdict) error {
	switch {
	case want.Guarded:
		return s.fail(ctx, c, "guarded")
	case want.NoBinding:
		return s.fail(ctx, c, "no shared binding")
	case want.ClaimNew:
		return s.claimAndPlace(ctx, c, nil)
	}
	return s.place(ctx, c, want.Binding)
}

// claimAndPlace claims a free binding for the cluster's GA, tells the
// table when req is given, and places the cluster there.
func (s *stream) claimAndPlace(ctx context.Context, c *cluster, req *provisioning.Request) error {
	name, err := s.claim(ctx, c.ga, c.pool)
	if errors.Is(err, kebrules.ErrPoolEmpty) {
		s.tally.ClaimsFailed++
		if req != nil {
			if err := s.client.AbandonClaim(ctx, *req); err != nil {
				return err
			}
		}
		return s.fail(ctx, c, "no free binding to claim")
	}
	if err != nil {
		return err
	}
	s.note("claimed %s for %s (%s), recorded %t", name, c.ga, c.instanceID, req != nil)
	if req != nil {
		if err := s.recordClaim(ctx, *req, name); err != nil {
			return err
		}
	}
	return s.place(ctx, c, name)
}

// sharedPick is a runtime whose rule sends it to a shared pool.
func (s *stream) sharedPick(ctx context.Context) error {
	p := sharedPool
	if s.rng.IntN(12) == 0 {
		p = emptySharedPool
	}
	c, err := s.request(ctx, s.chooseGA(), p, true)
	if err != nil {
		return err
	}
	return s.tablePick(ctx, c)
}

// livePlacement is a provisioning on KEB's live path without the table: a
// replica not yet switched, or one whose database call failed.
func (s *stream) livePlacement(ctx context.Context) error {
	c, err := s.request(ctx, s.chooseGA(), s.choosePool(), false)
	if err != nil {
		return err
	}
	want, err := s.oracle(ctx, c)
	if err != nil {
		return err
	}
	s.tally.LivePlacements++
	s.note("live path for %s: KEB %s", c.instanceID, want)
	return s.live(ctx, c, want)
}

func (s *stream) deprovisionOne(ctx context.Context) error {
	if len(s.active) == 0 {
		return nil
	}
	c := s.removeActive(s.rng.IntN(len(s.active)))
	// A soak's KEB always removes the row at the end
	// (deprovisioning.RemoveInstanceStep, removeInstancePermanently).
	removeRow := s.rng.IntN(4) == 0 || s.soak
	return s.deprovision(ctx, c, removeRow)
}

// removeFinished is the end of KEB's deprovisioning of the provisionings
// that failed (fail marks them deleted): RemoveInstanceStep removes their
// rows.
func (s *stream) removeFinished(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM instances WHERE deleted_at > '0001-01-01 00:00:00+00'`)
	if err != nil {
		return fmt.Errorf("remove finished instances: %w", err)
	}
	return nil
}

func (s *stream) cleanupOne(ctx context.Context) error {
	return s.cleanup(ctx, s.rng.IntN)
}

func (s *stream) jobRun(ctx context.Context) error {
	return s.runJob(ctx)
}

// operatorRetires is an operator labelling a claimed binding dirty by hand
// to retire its account, outside KEB's free step: nothing withdraws it from
// the table, Gardener's confirmation must keep it out of every pick.
func (s *stream) operatorRetires(ctx context.Context) error {
	claimed, err := s.keb.List(ctx, "tenantName,!dirty,!internal")
	if err != nil || len(claimed) == 0 {
		return err
	}
	b := claimed[s.rng.IntN(len(claimed))]
	labels := maps.Clone(b.GetLabels())
	labels[hap.LabelDirty] = "true"
	if err := s.update(ctx, b, labels); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("operator: retire %s: %w", b.GetName(), err)
	}
	s.tally.OperatorLabels++
	s.note("operator: %s dirty by hand", b.GetName())
	return nil
}

// sharedPoolGrows is an operator adding a binding to a shared pool, the
// empty one first: the table holds it from the job's next run on, KEB's
// live path at once.
func (s *stream) sharedPoolGrows(ctx context.Context) error {
	p := emptySharedPool
	if s.rng.IntN(2) == 0 {
		p = sharedPool
	}
	b := s.sc.Landscape.AddBinding(landscape.BindingSpec{Pool: p, Shared: true})
	if err := landscape.CreateBinding(ctx, s.sc.Bed.Kube, s.sc.World.Namespace, b); err != nil {
		return fmt.Errorf("operator: add %s to %s: %w", b.Name, p, err)
	}
	s.tally.SharedAdded++
	s.note("operator: %s added to shared pool %s", b.Name, p)
	return nil
}
