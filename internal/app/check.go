package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// CheckResult is what Check saw: enough to tell on the landscape that the
// job can work there, and nothing of the data itself.
type CheckResult struct {
	Namespace string `json:"namespace"`
	// BindingsWithInstances is how many (binding, owning GA) pairs KEB's
	// instances table counts active instances for.
	BindingsWithInstances int `json:"bindingsWithActiveInstances"`
	// CandidateRows is how many rows of the job's candidate table were read.
	CandidateRows int `json:"candidateRows"`
	// Bindings is how many credentials bindings the namespace lists;
	// FirstShoot says whether its first page of shoots held anything.
	Bindings   int  `json:"bindings"`
	FirstShoot bool `json:"shootsListed"`
	// KEBIndex says whether KEB's instances table carries the index the
	// read path counts through (schema.KEBIndexUp), valid:
	// KEB adds it before it reads the table, and until it is there and
	// valid the read path hands every request to KEB's live path
	// (provisioning.ErrNoKEBIndex). An index left INVALID by a failed
	// concurrent build counts as missing. Not a failure of the job's
	// install: KEB's read path needs it.
	KEBIndex bool `json:"kebIndexForTheReadPath"`
	// KEBModule says where the job's schema stands for the provisioning
	// module KEB pins (kebModule.*): "reads schema version N (range)", or
	// "" when a check failed on it.
	KEBModule string `json:"kebModule"`
	// PolicySource says where the multi-account policy comes from.
	PolicySource string `json:"policySource"`
	// LimitsAndGuard says which configuration a pick's limit and guard come
	// from: KEB's own when KEB passes provisioning.Request.Account, else the
	// table's, decided with the job's copy of KEB's variables.
	LimitsAndGuard string `json:"limitsAndGuard"`
	// Failures are the checks that failed, the one to fix first first;
	// empty when the job can work here.
	Failures []string `json:"failures"`
}

// errSeenOne stops a list after its first item: Check proves that listing
// shoots works, it does not read the whole fleet.
var errSeenOne = errors.New("seen one")

// Check exercises, with the identity and credentials the job runs with,
// everything a run needs before it decides anything, in the order to fix
// them: the Gardener credentials (the project's bindings and shoots listed),
// KEB's database read with the job's role (the run's own aggregate over
// KEB's instances, and the job's candidate table), the two together (a
// namespace that lists no binding, or far fewer than KEB's database uses,
// is the wrong one: hap.Implausible, as a run refuses it), and the
// multi-account policy taken from KEB's variables, as the chart sets them.
// It writes nothing. Every check runs that can; the error lists each
// failure, the one to fix first first, with what to check.
func Check(ctx context.Context, env *Env) (CheckResult, error) {
	res := CheckResult{Namespace: env.Config.Namespace, PolicySource: env.Config.PolicySource,
		LimitsAndGuard: "KEB's configuration for a request carrying provisioning.Request.Account; otherwise the table's, from " + env.Config.PolicySource}
	var failed []string
	bindings, err := checkGardener(ctx, env, &res)
	if err != nil {
		failed = append(failed, err.Error())
	}
	read, err := env.Runner.Store.ReadInstanceCounts(ctx)
	if err != nil {
		failed = append(failed, fmt.Sprintf("reading KEB's instances with the job's role: %v", err))
	} else {
		res.BindingsWithInstances = len(read.Counts)
		if res.KEBIndex, err = env.Store.HasKEBIndex(ctx); err != nil {
			failed = append(failed, fmt.Sprintf("reading the catalog with the job's role: %v", err))
		}
		if v, skew, err := kebModuleReads(ctx, env.Store, env.Config.KEBModule); err != nil {
			failed = append(failed, fmt.Sprintf("reading the job's schema version with the job's role: %v", err))
		} else if skew != nil {
			failed = append(failed, fmt.Sprintf("KEB's pinned provisioning module (kebModule.*) does not read the job's schema, every pick goes to KEB's live path: %v", skew))
		} else if v.Version > 0 {
			res.KEBModule = fmt.Sprintf("reads schema version %d (versions %s)", v.Version, env.Config.KEBModule.Reads())
		}
		if rows, err := env.Reports.Candidates(ctx, ""); err != nil {
			failed = append(failed, fmt.Sprintf("reading the job's candidate table with the job's role: %v", err))
		} else {
			res.CandidateRows = len(rows)
		}
	}
	if len(failed) == 0 {
		if why := hap.Implausible(hap.NewShootCounter(read.Counts).Tally(bindings)); why != "" {
			failed = append(failed, fmt.Sprintf("namespace %q is not the one KEB provisions in: %s; set the namespace (hapReconciler.gardener.namespace or KEB's gardener.project) "+
				"and the kubeconfig to KEB's Gardener project, every run refuses this picture", res.Namespace, why))
		}
	}
	if !strings.HasPrefix(env.Config.PolicySource, config.SourceEnvironment) {
		failed = append(failed, fmt.Sprintf("the multi-account policy does not come from KEB's APP_HAP_MULTI_HYPERSCALER_ACCOUNT_* variables (source: %q): "+
			"install the chart with the values file KEB is deployed with, whose hap block sets them", env.Config.PolicySource))
	}
	res.Failures = append([]string{}, failed...)
	switch len(failed) {
	case 0:
		return res, nil
	case 1:
		return res, errors.New(failed[0])
	}
	for i := range failed {
		failed[i] = fmt.Sprintf("(%d) %s", i+1, failed[i])
	}
	return res, fmt.Errorf("%d checks failed, fix them in this order: %s", len(failed), strings.Join(failed, "; "))
}

// checkGardener lists every binding of the namespace (a few thousand at
// most, what the plausibility check weighs) and the first shoot.
func checkGardener(ctx context.Context, env *Env, res *CheckResult) ([]hap.Binding, error) {
	var bindings []hap.Binding
	err := env.Runner.Gardener.ListBindings(ctx, func() { bindings = bindings[:0] }, func(b hap.Binding) error {
		bindings = append(bindings, b)
		return nil
	}, func(hap.Skipped) {})
	if err != nil {
		return nil, fmt.Errorf("listing credentials bindings: %w", err)
	}
	res.Bindings = len(bindings)
	err = env.Runner.Gardener.ListShoots(ctx, func() {}, func(hap.Shoot) error {
		res.FirstShoot = true
		return errSeenOne
	})
	if err != nil && !errors.Is(err, errSeenOne) {
		return nil, fmt.Errorf("listing shoots: %w", err)
	}
	return bindings, nil
}
