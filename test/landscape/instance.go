package landscape

import (
	"encoding/json"
	"fmt"
)

// kymaServiceID is the service id KEB's catalog gives Kyma.
const kymaServiceID = "47c9dcbf-ff30-448e-ab36-d3bad66ba281"

// provisioningParameters mirrors the JSON KEB stores per instance; struct
// field order keeps the encoding deterministic.
type provisioningParameters struct {
	PlanID           string            `json:"plan_id"`
	ServiceID        string            `json:"service_id"`
	ErsContext       ersContext        `json:"ers_context"`
	Parameters       clusterParameters `json:"parameters"`
	PlatformRegion   string            `json:"platform_region"`
	PlatformProvider string            `json:"platform_provider"`
}

type ersContext struct {
	TenantID        string `json:"tenant_id"`
	SubAccountID    string `json:"subaccount_id"`
	GlobalAccountID string `json:"globalaccount_id"`
	Active          bool   `json:"active"`
	UserID          string `json:"user_id"`
	LicenseType     string `json:"license_type"`
}

type clusterParameters struct {
	Name          string `json:"name"`
	Region        string `json:"region"`
	MachineType   string `json:"machineType"`
	AutoScalerMin int    `json:"autoScalerMin"`
	AutoScalerMax int    `json:"autoScalerMax"`
}

// newInstance returns an instance row of ga on binding ("" = not assigned
// yet). An instance that is not running is suspended: ERS marked it inactive.
func (l *Landscape) newInstance(ga, binding string, p PoolProfile, running bool) Instance {
	r := l.rng
	created := r.before(epoch, 400*day)
	subAccount := r.uuid()
	params := provisioningParameters{
		PlanID:    planID(p.Plan),
		ServiceID: kymaServiceID,
		ErsContext: ersContext{
			TenantID:        r.uuid(),
			SubAccountID:    subAccount,
			GlobalAccountID: ga,
			Active:          running,
			UserID:          fmt.Sprintf("user%04d@example.com", r.IntN(10000)),
			LicenseType:     pick(r, []string{"CUSTOMER", "PARTNER", "SAPDEV", "TRIAL"}),
		},
		Parameters: clusterParameters{
			Name:          "kyma-" + r.alnum(6),
			Region:        p.Region,
			MachineType:   pick(r, shapeFor(p.ProviderType).machineTypes),
			AutoScalerMin: 3,
			AutoScalerMax: r.between(4, 20),
		},
		PlatformRegion:   pick(r, []string{"cf-eu10", "cf-eu11", "cf-us10", "cf-ap21"}),
		PlatformProvider: p.KEBProvider,
	}
	encoded, _ := json.Marshal(params) // cannot fail: strings, ints and bools only
	return Instance{
		InstanceID:             r.uuid(),
		RuntimeID:              r.uuid(),
		GlobalAccountID:        ga,
		SubAccountID:           subAccount,
		SubscriptionSecretName: binding,
		Provider:               p.KEBProvider,
		ProviderRegion:         p.Region,
		ServicePlanName:        p.Plan,
		ProvisioningParameters: string(encoded),
		CreatedAt:              created,
		UpdatedAt:              r.after(created, 30*day),
	}
}

// planID returns the catalog id KEB uses for a plan.
func planID(plan string) string {
	ids := map[string]string{
		"aws":                 "361c511f-f939-4621-b228-d0fb79a1fe15",
		"azure":               "4deee563-e5ec-4731-b9b1-53b42d855f0c",
		"gcp":                 "ca6e5357-707f-4565-bbbd-b3ab732597c6",
		"sap-converged-cloud": "03b812ac-c991-4528-b5bd-08b303523a63",
	}
	return ids[plan]
}
