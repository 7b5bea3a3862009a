package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/report"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

// The report says where KEB's guard stops a GA, and where rank 1 is not
// KEB's own choice and why, in the table and in JSON, stored and live.
func TestReportShowsKEBsGuardAndKEBsOwnChoice(t *testing.T) {
	l := landscape.New(12)
	aws := hap.Pool{HyperscalerType: "aws"}
	// ga-idle: two bindings, no instance of its own: guarded (minimum 2).
	for _, name := range []string{"idle-1", "idle-2"} {
		l.AddBinding(landscape.BindingSpec{Name: name, Pool: aws, GlobalAccountID: "ga-idle"})
	}
	// ga-busy: full-ish has 3 instances but 5 shoots; other has 2 and 2.
	// Limit 4: KEB picks full-ish (3 < 4), the job counts 5 shoots: other.
	row := func(id, binding string) {
		l.AddInstance(landscape.Instance{InstanceID: id, RuntimeID: "rt-" + id, GlobalAccountID: "ga-busy",
			SubscriptionSecretName: binding, ProvisioningParameters: "{}"})
	}
	l.AddBinding(landscape.BindingSpec{Name: "full-ish", Pool: aws, GlobalAccountID: "ga-busy"})
	l.AddBinding(landscape.BindingSpec{Name: "other", Pool: aws, GlobalAccountID: "ga-busy"})
	for i, b := range []string{"full-ish", "full-ish", "full-ish", "other", "other"} {
		row(string(rune('a'+i)), b)
	}
	for _, b := range []string{"full-ish", "full-ish", "full-ish", "full-ish", "full-ish", "other", "other"} {
		l.AddShoot(landscape.ShootSpec{BindingName: b, GlobalAccountID: "ga-busy", Pool: aws})
	}
	s := load(t, l, `hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    minBindingsForGuard: 2
    limits: {default: 4}
`)
	live := s.mustRun(t, "report", "--live", "-o", "json")
	s.mustRun(t, "run", "--jobs", "drift,candidates")
	for _, out := range []string{live, s.mustRun(t, "report", "-o", "json")} {
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		groups := map[string]report.ReportGroup{}
		for _, g := range rep.Groups {
			groups[g.GlobalAccountID] = g
		}
		if g := groups["ga-idle"]; !g.Guarded || g.Next != "" || g.ClaimNew {
			t.Errorf("%s report: ga-idle %+v, want guarded", rep.Source, g)
		}
		if g := groups["ga-busy"]; g.Next != "other" || g.KEBChoice != "full-ish" || !strings.Contains(g.Deviation, "5 shoot(s)") {
			t.Errorf("%s report: ga-busy %+v, want next other, KEB's own choice full-ish, and why", rep.Source, g)
		}
	}
	table := s.mustRun(t, "report")
	for _, want := range []string{"GUARDED", "KEB'S OWN CHOICE", "rank 1 differs from KEB's own choice", "provisioning_guarded", "rank_one_deviation"} {
		if !strings.Contains(table, want) {
			t.Errorf("report table lacks %q:\n%s", want, table)
		}
	}
}
