package metrics

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

var aws = hap.Pool{HyperscalerType: "aws"}

// fixture is one run's figures and findings, with something for every
// fleet family to expose.
func fixture() (hap.Fleet, []hap.OpenFinding) {
	limit := 5
	tally := hap.NewTally(hap.Snapshot{
		Bindings: []hap.Binding{
			{Name: "a", GlobalAccountID: "ga", Pool: aws},
			{Name: "b", GlobalAccountID: "ga", Pool: aws},
			{Name: "free-1", Pool: aws},
			{Name: "free-dirty", Pool: aws, Dirty: true},
			// KEB's claim selector does not read internal: it is free to claim.
			{Name: "free-internal", Pool: aws, Internal: true},
			// dirty: "false" keeps it from every selector of KEB's.
			{Name: "free-odd", Pool: aws, Dirty: true, OutOfPool: `label dirty has value "false"`},
			{Name: "eu-claimed", GlobalAccountID: "ga", Pool: hap.Pool{HyperscalerType: "aws", EUAccess: true}},
		},
		Shoots:    []hap.Shoot{{Name: "s1", BindingName: "a"}, {Name: "s2", BindingName: "a"}},
		Instances: []hap.InstanceCount{{BindingName: "a", GlobalAccountID: "ga", Active: 2}},
	})
	candidates := []hap.Candidate{
		{GlobalAccountID: "ga", Pool: aws, BindingName: "a", Limit: &limit, Selectable: true},
		{GlobalAccountID: "ga", Pool: aws, BindingName: "b", Limit: &limit, Selectable: true},
		{GlobalAccountID: "ga", Pool: hap.Pool{HyperscalerType: "aws", EUAccess: true}, BindingName: "eu-claimed", Limit: &limit, Headroom: &limit, Selectable: true},
	}
	fleet := hap.FleetOf(tally, candidates, hap.DecidePools(tally, candidates), []hap.Skipped{{Kind: "Shoot", Name: "x"}})
	days := 12.5
	fleet.Pools = []hap.PoolFigures{
		{Key: hap.PoolKey{Pool: aws}, Rules: []string{"aws", "aws(PR=cf-eu11) -> EU"}, Free: 2, Claimed: 2, Dirty: 1, NearlyFull: 1, DaysLeft: &days},
		{Key: hap.PoolKey{Pool: aws, Shared: true}, SharedBindings: 3},
		{Key: hap.PoolKey{Pool: hap.Pool{HyperscalerType: "openstack_*"}}, Rules: []string{"sap-converged-cloud(HR=*) -> HR"}, Unreachable: true},
	}
	drift := []hap.OpenFinding{{Finding: hap.Finding{BindingName: "a", GlobalAccountID: "ga", Pool: aws, Kind: hap.KindCountMismatch},
		FirstSeen: time.Unix(1e9, 0)}}
	return fleet, drift
}

// Every fleet family exposes exactly this for the fixture: one case per
// family, compared as exposition text.
var familyCases = map[string]string{
	"keb_credentials_bindings_per_ga": `
# HELP keb_credentials_bindings_per_ga CredentialsBindings (hyperscaler accounts) claimed by the global account in the pool.
# TYPE keb_credentials_bindings_per_ga gauge
keb_credentials_bindings_per_ga{eu_access="false",global_account_id="ga",hyperscaler_type="aws"} 2
keb_credentials_bindings_per_ga{eu_access="true",global_account_id="ga",hyperscaler_type="aws"} 1
`,
	"keb_shoots_per_credentials_binding": `
# HELP keb_shoots_per_credentials_binding Shoots in Gardener that use the CredentialsBinding, those being deleted included.
# TYPE keb_shoots_per_credentials_binding gauge
keb_shoots_per_credentials_binding{credentials_binding="a",eu_access="false",global_account_id="ga",hyperscaler_type="aws"} 2
keb_shoots_per_credentials_binding{credentials_binding="b",eu_access="false",global_account_id="ga",hyperscaler_type="aws"} 0
keb_shoots_per_credentials_binding{credentials_binding="eu-claimed",eu_access="true",global_account_id="ga",hyperscaler_type="aws"} 0
`,
	"keb_available_credentials_bindings": `
# HELP keb_available_credentials_bindings Free CredentialsBindings in the pool: those KEB's claim selector returns (no tenantName, not shared, no dirty label).
# TYPE keb_available_credentials_bindings gauge
keb_available_credentials_bindings{eu_access="false",hyperscaler_type="aws"} 2
keb_available_credentials_bindings{eu_access="true",hyperscaler_type="aws"} 0
`,
	"hap_reconciler_selectable_credentials_bindings": `
# HELP hap_reconciler_selectable_credentials_bindings Bindings of the global account in the pool still below their limit; 0 means the next provisioning claims a new one.
# TYPE hap_reconciler_selectable_credentials_bindings gauge
hap_reconciler_selectable_credentials_bindings{eu_access="false",global_account_id="ga",hyperscaler_type="aws"} 2
hap_reconciler_selectable_credentials_bindings{eu_access="true",global_account_id="ga",hyperscaler_type="aws"} 1
`,
	"hap_reconciler_skipped_objects": `
# HELP hap_reconciler_skipped_objects Objects of the last run that could not be used and were skipped.
# TYPE hap_reconciler_skipped_objects gauge
hap_reconciler_skipped_objects{kind="CredentialsBinding"} 0
hap_reconciler_skipped_objects{kind="Shoot"} 1
`,
	"hap_reconciler_pool_credentials_bindings": `
# HELP hap_reconciler_pool_credentials_bindings CredentialsBindings of the pool by state (free, claimed, dirty, shared), as KEB's selectors read them; rule names the hap.rule entries that lead to the pool (joined by "; "), empty when none does. A pool a rule names is listed with 0 even without bindings. unreachable is "true" when every such entry names "*" as an input, which KEB reads literally, so no real runtime is sent there; absent otherwise.
# TYPE hap_reconciler_pool_credentials_bindings gauge
hap_reconciler_pool_credentials_bindings{eu_access="false",hyperscaler_type="aws",rule="",shared="true",state="shared",unreachable=""} 3
hap_reconciler_pool_credentials_bindings{eu_access="false",hyperscaler_type="aws",rule="aws; aws(PR=cf-eu11) -> EU",shared="false",state="claimed",unreachable=""} 2
hap_reconciler_pool_credentials_bindings{eu_access="false",hyperscaler_type="aws",rule="aws; aws(PR=cf-eu11) -> EU",shared="false",state="dirty",unreachable=""} 1
hap_reconciler_pool_credentials_bindings{eu_access="false",hyperscaler_type="aws",rule="aws; aws(PR=cf-eu11) -> EU",shared="false",state="free",unreachable=""} 2
hap_reconciler_pool_credentials_bindings{eu_access="false",hyperscaler_type="openstack_*",rule="sap-converged-cloud(HR=*) -> HR",shared="false",state="claimed",unreachable="true"} 0
hap_reconciler_pool_credentials_bindings{eu_access="false",hyperscaler_type="openstack_*",rule="sap-converged-cloud(HR=*) -> HR",shared="false",state="dirty",unreachable="true"} 0
hap_reconciler_pool_credentials_bindings{eu_access="false",hyperscaler_type="openstack_*",rule="sap-converged-cloud(HR=*) -> HR",shared="false",state="free",unreachable="true"} 0
`,
	"hap_reconciler_pool_nearly_full_global_accounts": `
# HELP hap_reconciler_pool_nearly_full_global_accounts Global accounts whose last selectable binding in the pool has at most a tenth of its limit left.
# TYPE hap_reconciler_pool_nearly_full_global_accounts gauge
hap_reconciler_pool_nearly_full_global_accounts{eu_access="false",hyperscaler_type="aws",rule="aws; aws(PR=cf-eu11) -> EU",shared="false"} 1
hap_reconciler_pool_nearly_full_global_accounts{eu_access="false",hyperscaler_type="openstack_*",rule="sap-converged-cloud(HR=*) -> HR",shared="false"} 0
`,
	"hap_reconciler_pool_exhaustion_seconds": `
# HELP hap_reconciler_pool_exhaustion_seconds Seconds until the pool has no free binding at the claim rate of the last 14 days of recorded runs; absent while free bindings are not going down.
# TYPE hap_reconciler_pool_exhaustion_seconds gauge
hap_reconciler_pool_exhaustion_seconds{eu_access="false",hyperscaler_type="aws",rule="aws; aws(PR=cf-eu11) -> EU",shared="false"} 1.08e+06
`,
	"hap_reconciler_drift_findings": `
# HELP hap_reconciler_drift_findings Open drift findings: 1 per finding.
# TYPE hap_reconciler_drift_findings gauge
hap_reconciler_drift_findings{credentials_binding="a",eu_access="false",global_account_id="ga",hyperscaler_type="aws",kind="count_mismatch"} 1
`,
	"hap_reconciler_drift_finding_first_seen_timestamp_seconds": `
# HELP hap_reconciler_drift_finding_first_seen_timestamp_seconds When the open drift finding was first seen.
# TYPE hap_reconciler_drift_finding_first_seen_timestamp_seconds gauge
hap_reconciler_drift_finding_first_seen_timestamp_seconds{credentials_binding="a",global_account_id="ga",kind="count_mismatch"} 1e+09
`,
}

func TestEveryFleetFamilyExposesItsFigures(t *testing.T) {
	m := New()
	fleet, drift := fixture()
	m.SetFleet(fleet)
	m.SetDrift(drift)
	for _, f := range fleetFamilies {
		want, ok := familyCases[f.name]
		if !ok {
			t.Errorf("family %s has no case in familyCases", f.name)
			continue
		}
		if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), f.name); err != nil {
			t.Errorf("%s:\n%v", f.name, err)
		}
	}
	if len(familyCases) != len(fleetFamilies) {
		t.Errorf("%d cases for %d families: a case names a family that is gone", len(familyCases), len(fleetFamilies))
	}
}

// A run replaces the series whole: what it no longer sees is gone.
func TestTheNextRunsFiguresReplaceTheLast(t *testing.T) {
	m := New()
	fleet, _ := fixture()
	m.SetFleet(fleet)
	tally := hap.NewTally(hap.Snapshot{Bindings: []hap.Binding{{Name: "a", GlobalAccountID: "ga", Pool: aws}}})
	m.SetFleet(hap.FleetOf(tally, nil, hap.DecidePools(tally, nil), nil))
	if n := testutil.CollectAndCount(newFamilyCollector(m), "keb_shoots_per_credentials_binding"); n != 1 {
		t.Fatalf("stale series kept: %d series, want 1", n)
	}
}

func TestExpositionPassesPromtool(t *testing.T) {
	promtool := ensurePromtool(t)
	m := New()
	fleet, drift := fixture()
	m.SetFleet(fleet)
	m.SetDrift(drift)
	m.JobDone("drift", time.Second, nil, time.Unix(2e9, 0))
	m.JobDone("release", time.Second, os.ErrClosed, time.Unix(2e9, 0))
	m.Release("dirty", "released")
	m.GuardTripped()
	m.PushFailed()
	m.CandidatesComputed(time.Unix(2e9, 0))
	m.SetShadow(map[string]int{hap.ShadowAgree: 3})
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text.String())
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s\n---\n%s", err, out, text.String())
	}
}

// ensurePromtool returns promtool's path, installing it through the
// project's script on a machine that lacks it.
func ensurePromtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	out, err := exec.Command("bash", filepath.Join("..", "..", "hack", "install-promtool.sh")).Output()
	if err != nil {
		t.Fatalf("installing promtool: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
