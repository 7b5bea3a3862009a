package landscape

import (
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// PoolProfile describes one pool of the generated landscape: the labels KEB
// searches bindings by, and what a cluster in it looks like to Gardener and
// to KEB's database.
type PoolProfile struct {
	Pool hap.Pool
	// ProviderType is provider.type on bindings and shoots.
	ProviderType string
	// KEBProvider is the instances.provider value KEB writes.
	KEBProvider string
	Plan        string
	Region      string
	// Shared pools hold bindings many GAs use at once.
	Shared bool
}

// Pools are the pools every generated landscape has.
var Pools = []PoolProfile{
	{Pool: hap.Pool{HyperscalerType: "aws"}, ProviderType: "aws", KEBProvider: "AWS", Plan: "aws", Region: "eu-central-1"},
	{Pool: hap.Pool{HyperscalerType: "aws", EUAccess: true}, ProviderType: "aws", KEBProvider: "AWS", Plan: "aws", Region: "eu-central-1"},
	{Pool: hap.Pool{HyperscalerType: "azure"}, ProviderType: "azure", KEBProvider: "Azure", Plan: "azure", Region: "westeurope"},
	{Pool: hap.Pool{HyperscalerType: "gcp"}, ProviderType: "gcp", KEBProvider: "GCP", Plan: "gcp", Region: "europe-west3"},
	{Pool: hap.Pool{HyperscalerType: "openstack_eu-de-1"}, ProviderType: "openstack", KEBProvider: "SapConvergedCloud", Plan: "sap-converged-cloud", Region: "eu-de-1", Shared: true},
}

// slug is the pool as it appears in binding names, which must be DNS names.
func (p PoolProfile) slug() string {
	s := strings.ReplaceAll(p.Pool.HyperscalerType, "_", "-")
	if p.Pool.EUAccess {
		s += "-eu"
	}
	return s
}

func profileFor(pool hap.Pool) (PoolProfile, bool) {
	for _, p := range Pools {
		if p.Pool == pool {
			return p, true
		}
	}
	return PoolProfile{}, false
}
