package parity

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/kebrules"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// world is one random landscape and KEB's configuration for it.
type world struct {
	l   *landscape.Landscape
	cfg kebrules.Config
	// yaml is the job's configuration: KEB's hap block, as KEB's values
	// write it.
	yaml string
	// gas and dedicatedPools, sharedPools span every (GA, pool) to check.
	gas            []string
	dedicatedPools []hap.Pool
	sharedPools    []hap.Pool
}

var (
	dedicatedPools = []hap.Pool{{HyperscalerType: "aws"}, {HyperscalerType: "aws", EUAccess: true}, {HyperscalerType: "gcp"}, {HyperscalerType: "openstack_eu-de-1"}, {HyperscalerType: "gdch"}}
	sharedPools    = []hap.Pool{{HyperscalerType: "azure"}, {HyperscalerType: "gcp", EUAccess: true}}
	// Name stems whose text order in a collating locale differs from byte
	// order, so ties exercise both.
	stems = []string{"acct-1b", "acct1a", "acct-2", "acct2", "acct.3", "acct-10"}
)

// nullOwnerSuffix marks the instances whose subscription_global_account_id
// nullOwners sets to NULL once loaded (the landscape writes an empty text
// for none).
const nullOwnerSuffix = "-null-owner"

// nullOwners sets subscription_global_account_id to NULL on the marked rows.
func nullOwners(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, `UPDATE instances SET subscription_global_account_id = NULL WHERE instance_id LIKE '%' || $1`, nullOwnerSuffix)
	return err
}

// randomWorld plants, for seed, GAs with several bindings per pool, label
// values KEB's selectors read in surprising ways, instances owned through
// subscription_global_account_id, other GAs' rows, deleted rows, shoots that
// trail or lead the database, shared pools with ties, and a configuration
// with limits of 0 and KEB's guard. Seed 1 is KEB's own values block as its
// chart ships it.
func randomWorld(seed uint64, kebValues string) world {
	rng := rand.New(rand.NewPCG(seed, 7))
	l := landscape.New(seed)
	w := world{l: l, dedicatedPools: dedicatedPools, sharedPools: sharedPools}
	for g := range 4 {
		w.gas = append(w.gas, fmt.Sprintf("ga-%d-%d", seed, g))
	}
	w.cfg, w.yaml = randomConfig(rng, seed, w.gas, kebValues)

	names := map[string]bool{}
	newName := func(pool hap.Pool) string {
		for {
			n := fmt.Sprintf("%s-%s-%d", slug(pool), stems[rng.IntN(len(stems))], rng.IntN(3))
			if !names[n] {
				names[n] = true
				return n
			}
		}
	}
	instance := 0
	addInstances := func(binding, owner string, n int, provider string) {
		for range n {
			instance++
			row := landscape.Instance{
				InstanceID: fmt.Sprintf("i-%d-%d", seed, instance), RuntimeID: fmt.Sprintf("r-%d-%d", seed, instance),
				GlobalAccountID: owner, SubscriptionSecretName: binding, Provider: provider,
				ProvisioningParameters: "{}", CreatedAt: time.Unix(1700000000, 0), UpdatedAt: time.Unix(1700000000, 0),
			}
			switch rng.IntN(6) {
			case 0: // moved subaccount: another GA's row on this GA's subscription
				row.GlobalAccountID, row.SubscriptionGlobalAccountID = w.gas[rng.IntN(len(w.gas))]+"-moved", owner
			case 1: // deleted: never counted
				row.DeletedAt = time.Unix(1710000000, 0)
			case 2: // the GA's row on another GA's subscription: that GA's
				row.SubscriptionGlobalAccountID = w.gas[rng.IntN(len(w.gas))]
			case 3: // subscription_global_account_id NULL (see nullOwners): nobody's in KEB's count
				row.InstanceID += nullOwnerSuffix
			}
			l.AddInstance(row)
		}
	}
	oddLabels := []map[string]string{
		nil, nil, nil,
		{hap.LabelDirty: "false"},
		{hap.LabelEUAccess: "false"},
		{hap.LabelEUAccess: "True"},
		{hap.LabelShared: "yes"},
		{hap.LabelInternal: "true"},
		{hap.LabelDirty: "true"},
	}
	// The last GA's gcp bindings hold no instance of its own, only other
	// GAs' rows and shoots: where the guard is on, KEB refuses it.
	idle, idlePool := w.gas[len(w.gas)-1], dedicatedPools[2]
	for range 3 {
		name := newName(idlePool)
		l.AddBinding(landscape.BindingSpec{Name: name, Pool: idlePool, GlobalAccountID: idle})
		addInstances(name, w.gas[0], rng.IntN(2), "GCP")
		l.AddShoot(landscape.ShootSpec{BindingName: name, GlobalAccountID: idle, Pool: idlePool})
	}
	for _, ga := range w.gas {
		for _, pool := range dedicatedPools {
			if ga == idle && pool == idlePool {
				continue
			}
			for range rng.IntN(4) {
				name := newName(pool)
				labels := oddLabels[rng.IntN(len(oddLabels))]
				l.AddBinding(landscape.BindingSpec{Name: name, Pool: pool, GlobalAccountID: ga, Labels: labels})
				own := rng.IntN(5)
				addInstances(name, ga, own, "AWS")
				addInstances(name, w.gas[rng.IntN(len(w.gas))], rng.IntN(3), "AWS") // other GAs' rows, or more of its own
				shoots := own
				if rng.IntN(5) == 0 { // Gardener leads or trails the database
					shoots = max(0, own+rng.IntN(5)-2)
				}
				for range shoots {
					l.AddShoot(landscape.ShootSpec{BindingName: name, GlobalAccountID: ga, Pool: pool})
				}
			}
		}
	}
	for _, pool := range dedicatedPools {
		for range 1 + rng.IntN(2) {
			labels := []map[string]string{nil, {hap.LabelTenantName: ""}}[rng.IntN(2)]
			l.AddBinding(landscape.BindingSpec{Name: newName(pool), Pool: pool, Labels: labels})
		}
	}
	for _, pool := range sharedPools {
		for range 2 + rng.IntN(3) {
			name := newName(pool)
			labels := []map[string]string{nil, nil, {hap.LabelDirty: "true"}, {hap.LabelEUAccess: "True"}}[rng.IntN(4)]
			l.AddBinding(landscape.BindingSpec{Name: name, Pool: pool, Shared: true, Labels: labels})
			for range rng.IntN(3) {
				l.AddShoot(landscape.ShootSpec{BindingName: name, GlobalAccountID: w.gas[0], Pool: pool, Legacy: rng.IntN(4) == 0})
			}
		}
	}
	return w
}

func slug(p hap.Pool) string {
	s := strings.ReplaceAll(p.HyperscalerType, "_", "-")
	if p.EUAccess {
		s += "-eu"
	}
	return s
}

// randomConfig returns KEB's configuration and the hap block that states
// it. Seed 1 takes KEB's chart values verbatim.
func randomConfig(rng *rand.Rand, seed uint64, gas []string, kebValues string) (kebrules.Config, string) {
	if seed == 1 {
		// KEB's values: feature off, every limit 0, guard off.
		return kebrules.Config{Limits: map[string]int{}}, kebValues
	}
	allowlists := [][]string{{"*"}, {gas[0], gas[2]}, {gas[1], "*"}, {}}
	cfg := kebrules.Config{
		Allowed:             allowlists[rng.IntN(len(allowlists))],
		Limits:              map[string]int{"default": []int{0, 2, 3, 4}[rng.IntN(4)], "aws": []int{0, 2, 3, 5}[rng.IntN(4)], "gcp": []int{0, 1, 3}[rng.IntN(3)]},
		MinBindingsForGuard: []int{0, 0, 2, 3}[rng.IntN(4)],
	}
	quoted := make([]string, len(cfg.Allowed))
	for i, a := range cfg.Allowed {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	slices.Sort(quoted)
	yaml := fmt.Sprintf(`hap:
  rule:
    - aws
  multiHyperscalerAccount:
    allowedGlobalAccounts: [%s]
    minBindingsForGuard: %d
    limits:
      default: %d
      aws: %d
      gcp: %d
      azure: 0
      openstack: 0
      alicloud: 0
      gdch: 0
`, strings.Join(quoted, ", "), cfg.MinBindingsForGuard, cfg.Limits["default"], cfg.Limits["aws"], cfg.Limits["gcp"])
	return cfg, yaml
}
