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

func tallyOf(bindings []hap.Binding, shoots []hap.Shoot, instances []hap.InstanceCount) *hap.Tally {
	return hap.NewTally(hap.Snapshot{Bindings: bindings, Shoots: shoots, Instances: instances})
}

var aws = hap.Pool{HyperscalerType: "aws"}

func TestFleetSeriesCarryTheKEBNamesAndValues(t *testing.T) {
	limit := 5
	tally := tallyOf(
		[]hap.Binding{
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
		[]hap.Shoot{{Name: "s1", BindingName: "a"}, {Name: "s2", BindingName: "a"}},
		[]hap.InstanceCount{{BindingName: "a", GlobalAccountID: "ga", Active: 2}},
	)
	cands := []hap.Candidate{
		{GlobalAccountID: "ga", Pool: aws, BindingName: "a", Limit: &limit, Selectable: true},
		{GlobalAccountID: "ga", Pool: aws, BindingName: "b", Limit: &limit, Selectable: true},
	}
	m := New()
	m.SetFleet(FleetOf(tally, cands, []hap.Skipped{{Kind: "Shoot", Name: "x"}}))
	want := `
# HELP keb_available_credentials_bindings Free CredentialsBindings in the pool: those KEB's claim selector returns (no tenantName, not shared, no dirty label).
# TYPE keb_available_credentials_bindings gauge
keb_available_credentials_bindings{eu_access="false",hyperscaler_type="aws"} 2
keb_available_credentials_bindings{eu_access="true",hyperscaler_type="aws"} 0
# HELP keb_credentials_bindings_per_ga CredentialsBindings (hyperscaler accounts) claimed by the global account in the pool.
# TYPE keb_credentials_bindings_per_ga gauge
keb_credentials_bindings_per_ga{eu_access="false",global_account_id="ga",hyperscaler_type="aws"} 2
keb_credentials_bindings_per_ga{eu_access="true",global_account_id="ga",hyperscaler_type="aws"} 1
# HELP keb_shoots_per_credentials_binding Shoots in Gardener that use the CredentialsBinding, those being deleted included.
# TYPE keb_shoots_per_credentials_binding gauge
keb_shoots_per_credentials_binding{credentials_binding="a",eu_access="false",global_account_id="ga",hyperscaler_type="aws"} 2
keb_shoots_per_credentials_binding{credentials_binding="b",eu_access="false",global_account_id="ga",hyperscaler_type="aws"} 0
keb_shoots_per_credentials_binding{credentials_binding="eu-claimed",eu_access="true",global_account_id="ga",hyperscaler_type="aws"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"keb_available_credentials_bindings", "keb_credentials_bindings_per_ga", "keb_shoots_per_credentials_binding"); err != nil {
		t.Fatal(err)
	}

	// The next run no longer sees binding b: its series go away.
	m.SetFleet(FleetOf(tallyOf([]hap.Binding{{Name: "a", GlobalAccountID: "ga", Pool: aws}}, nil, nil), nil, nil))
	if n := testutil.CollectAndCount(fleetCollector{m}, "keb_shoots_per_credentials_binding"); n != 1 {
		t.Fatalf("stale series kept: %d series, want 1", n)
	}
}

func TestExpositionPassesPromtool(t *testing.T) {
	promtool := ensurePromtool(t)
	m := New()
	limit := 3
	tally := tallyOf([]hap.Binding{{Name: "a", GlobalAccountID: "ga", Pool: aws}}, []hap.Shoot{{Name: "s", BindingName: "a"}}, nil)
	m.SetFleet(FleetOf(tally, []hap.Candidate{{GlobalAccountID: "ga", Pool: aws, BindingName: "a", Limit: &limit}}, nil))
	m.SetDrift([]DriftSeries{{Finding: hap.Finding{BindingName: "a", GlobalAccountID: "ga", Pool: aws, Kind: hap.KindCountMismatch}, FirstSeen: time.Unix(1e9, 0)}})
	m.JobDone("drift", time.Second, nil, time.Unix(2e9, 0))
	m.JobDone("release", time.Second, os.ErrClosed, time.Unix(2e9, 0))
	m.Release("dirty", "released")
	m.GuardTripped()
	m.PushFailed()
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
