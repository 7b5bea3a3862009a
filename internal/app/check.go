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
	Namespace string
	// BindingsWithInstances is how many (binding, owning GA) pairs KEB's
	// instances table counts active instances for.
	BindingsWithInstances int
	// CandidateRows is how many rows of the job's candidate table were read.
	CandidateRows int
	// FirstBinding and FirstShoot say whether the project's first page of
	// each list held anything (an empty project is not an error).
	FirstBinding, FirstShoot bool
	PolicySource             string
	// LimitsAndGuard says which configuration a pick's limit and guard come
	// from: KEB's own when KEB passes provisioning.Request.Account, else the
	// table's, decided with the job's copy of KEB's variables.
	LimitsAndGuard string
}

// errSeenOne stops a list after its first item: Check proves that listing
// works, it does not read the whole fleet.
var errSeenOne = errors.New("seen one")

// Check exercises, with the identity and credentials the job runs with,
// everything a run needs before it decides anything: KEB's database read
// with the job's role (the run's own aggregate over KEB's instances, and the
// job's candidate table), the project's credentials bindings and shoots
// listed, and the multi-account policy taken from KEB's variables, as the
// chart sets them. It writes nothing. Each failure says what to check.
func Check(ctx context.Context, env *Env) (CheckResult, error) {
	res := CheckResult{Namespace: env.Config.Namespace, PolicySource: env.Config.PolicySource,
		LimitsAndGuard: "KEB's configuration for a request carrying provisioning.Request.Account; otherwise the table's, from " + env.Config.PolicySource}
	if !strings.HasPrefix(env.Config.PolicySource, config.SourceEnvironment) {
		return res, fmt.Errorf("the multi-account policy does not come from KEB's APP_HAP_MULTI_HYPERSCALER_ACCOUNT_* variables (source: %q): "+
			"install the chart with the values file KEB is deployed with, whose hap block sets them", env.Config.PolicySource)
	}
	read, err := env.Runner.Store.ReadInstanceCounts(ctx)
	if err != nil {
		return res, fmt.Errorf("reading KEB's instances with the job's role: %w", err)
	}
	res.BindingsWithInstances = len(read.Counts)
	rows, err := env.Reports.Candidates(ctx, "")
	if err != nil {
		return res, fmt.Errorf("reading the job's candidate table with the job's role: %w", err)
	}
	res.CandidateRows = len(rows)

	err = env.Runner.Gardener.ListBindings(ctx, func() {}, func(hap.Binding) error {
		res.FirstBinding = true
		return errSeenOne
	}, func(hap.Skipped) {})
	if err != nil && !errors.Is(err, errSeenOne) {
		return res, fmt.Errorf("listing credentials bindings: %w", err)
	}
	err = env.Runner.Gardener.ListShoots(ctx, func() {}, func(hap.Shoot) error {
		res.FirstShoot = true
		return errSeenOne
	})
	if err != nil && !errors.Is(err, errSeenOne) {
		return res, fmt.Errorf("listing shoots: %w", err)
	}
	return res, nil
}
