package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/report"
	"github.com/kyma-project/hap-reconciler/test/landscape"
)

func TestReportShowsEachGAAndPoolFromTheStoredTables(t *testing.T) {
	l := landscape.Generate(landscape.Options{Seed: 5, GlobalAccounts: 2})
	planted(l)
	s := load(t, l, plantedConfig)

	// --live works before the job ever ran and creates nothing.
	live := s.mustRun(t, "report", "--live", "-o", "json", "--ga", "ga-one")
	var schema *string
	if err := s.db(t).QueryRow(testContext(t), `SELECT to_regclass('hap.binding_candidates')::text`).Scan(&schema); err != nil || schema != nil {
		t.Fatalf("report --live must write nothing, found %v (%v)", schema, err)
	}

	s.mustRun(t, "run", "--jobs", "drift,candidates")
	stored := s.mustRun(t, "report", "-o", "json", "--ga", "ga-one")
	var rep report.Report
	if err := json.Unmarshal([]byte(stored), &rep); err != nil {
		t.Fatalf("report -o json: %v\n%s", err, stored)
	}
	if rep.Source != "stored" || len(rep.Groups) != 1 {
		t.Fatalf("want one stored group for ga-one, got %+v", rep)
	}
	g := rep.Groups[0]
	if g.GlobalAccountID != "ga-one" || g.HyperscalerType != "aws" || g.Next != "planted-cross" {
		// planted-cross and planted-mismatch both hold 2 clusters; the tie
		// goes to the name that sorts first.
		t.Errorf("group %+v: want ga-one/aws, next planted-cross", g)
	}
	drift := map[string][]string{}
	for _, r := range g.Rows {
		drift[r.Binding] = r.Drift
	}
	if !contains(drift["planted-full"], "over_limit") || !contains(drift["planted-cross"], "cross_tenant") {
		t.Errorf("drift per binding: %v", drift)
	}

	var liveRep report.Report
	if err := json.Unmarshal([]byte(live), &liveRep); err != nil {
		t.Fatal(err)
	}
	if len(liveRep.Groups) != 1 || liveRep.Groups[0].Next != g.Next || len(liveRep.Groups[0].Rows) != len(g.Rows) {
		t.Errorf("live and stored reports disagree:\nlive   %+v\nstored %+v", liveRep.Groups, rep.Groups)
	}

	table := s.mustRun(t, "report")
	for _, want := range []string{"GLOBAL ACCOUNT", "ga-one", "planted-full", "over_limit", "(shared)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestReportNamesTheGAThatMustClaimANewBinding(t *testing.T) {
	l := landscape.Generate(landscape.Options{Seed: 6, GlobalAccounts: 1})
	l.AddBinding(landscape.BindingSpec{Name: "full-only", Pool: aws, GlobalAccountID: "ga-full"})
	for range 5 {
		l.AddShoot(landscape.ShootSpec{BindingName: "full-only", GlobalAccountID: "ga-full", Pool: aws})
	}
	s := load(t, l, plantedConfig)
	s.mustRun(t, "run", "--jobs", "candidates")
	table := s.mustRun(t, "report", "--ga", "ga-full")
	if !strings.Contains(table, "CLAIM NEW") || strings.Contains(table, "planted") {
		t.Fatalf("want only ga-full with CLAIM NEW:\n%s", table)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
