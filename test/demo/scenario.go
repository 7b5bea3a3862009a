package main

import (
	"fmt"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// demoConfig is the job's configuration for the demo: KEB's rules (two of
// which name pools without a binding yet), KEB's multi-account block with a
// small AWS limit, so a handful of clusters fills a binding, and small list
// pages, so listing takes several.
const demoConfig = `# hap-reconciler demo configuration
hap:
  rule:
    - aws
    - aws(PR=cf-eu11) -> EU
    - azure
    - gcp
    - gcp(PR=cf-sa30) -> PR
    - sap-converged-cloud -> S, HR
    - trial -> S
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits:
      default: 5
      aws: 3
gardener:
  pageSize: 20
release:
  gracePeriod: 1h
`

// The planted part of the landscape, named so the output reads as a story.
const (
	spreadGA = "ga-spread" // one GA over three AWS bindings
	driftGA  = "ga-drift"  // a GA whose clusters disagree between KEB and Gardener
	idleGA   = "ga-idle"   // a GA that deprovisioned everything hours ago

	spreadFull = "aws-spread-1" // at the limit: not picked any more
	spreadNext = "aws-spread-2" // the most populated one below the limit
	spreadLast = "aws-spread-3"

	driftMismatch = "aws-drift-1"  // Gardener has a shoot KEB does not know
	driftGhost    = "aws-gone-1"   // shoots on a binding Gardener no longer has
	driftFree     = "aws-free-9"   // a free binding that holds a cluster
	driftDirty    = "aws-dirty-9"  // a released binding that still holds a cluster
	idleBinding   = "aws-idle-1"   // claimed, empty since long before the grace period
	idleFor       = 3 * time.Hour  // how long idleBinding has been empty
	demoSeed      = uint64(202611) // the generated rest of the landscape
)

var awsPool = hap.Pool{HyperscalerType: "aws"}

// demoLandscape is a small generated landscape (several GAs and pools,
// shared bindings, KEB's history of deleted and suspended instances) plus
// the planted story.
func demoLandscape() *landscape.Landscape {
	l := landscape.Generate(landscape.Options{Seed: demoSeed, GlobalAccounts: 6, ShootsPerGlobalAccount: 1, FreeBindingsPerPool: 1})
	p := planter{l: l}

	for _, b := range []struct {
		name     string
		clusters int
	}{{spreadFull, 3}, {spreadNext, 2}, {spreadLast, 1}} {
		l.AddBinding(landscape.BindingSpec{Name: b.name, Pool: awsPool, GlobalAccountID: spreadGA})
		for range b.clusters {
			p.cluster(spreadGA, b.name, true, true)
		}
	}

	l.AddBinding(landscape.BindingSpec{Name: driftMismatch, Pool: awsPool, GlobalAccountID: driftGA})
	p.cluster(driftGA, driftMismatch, true, true)
	p.cluster(driftGA, driftMismatch, true, false)
	p.cluster(driftGA, driftGhost, true, true)
	l.AddBinding(landscape.BindingSpec{Name: driftFree, Pool: awsPool})
	p.cluster(driftGA, driftFree, true, true)
	l.AddBinding(landscape.BindingSpec{Name: driftDirty, Pool: awsPool, GlobalAccountID: driftGA, Dirty: true})
	p.cluster(driftGA, driftDirty, false, true)

	l.AddBinding(landscape.BindingSpec{Name: idleBinding, Pool: awsPool, GlobalAccountID: idleGA})
	return l
}

// planter plants clusters: a shoot, KEB's instance, or both.
type planter struct {
	l *landscape.Landscape
	n int
}

func (p *planter) cluster(ga, binding string, shoot, instance bool) {
	p.n++
	runtime := fmt.Sprintf("rt-demo-%03d", p.n)
	if shoot {
		p.l.AddShoot(landscape.ShootSpec{BindingName: binding, RuntimeID: runtime, GlobalAccountID: ga, Pool: awsPool})
	}
	if instance {
		created := time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(p.n) * time.Hour)
		p.l.AddInstance(landscape.Instance{
			InstanceID: fmt.Sprintf("inst-demo-%03d", p.n), RuntimeID: runtime, GlobalAccountID: ga,
			SubscriptionSecretName: binding, Provider: "AWS", ProviderRegion: "eu-central-1", ServicePlanName: "aws",
			ProvisioningParameters: `{"ers_context":{"active":true}}`, CreatedAt: created, UpdatedAt: created,
		})
	}
}
