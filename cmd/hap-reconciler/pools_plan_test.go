package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planRules are the rules `pools --plan` is asked about: every kind of plan.
const planRules = `hap:
  rule:
    - aws
    - trial -> S
    - free
    - gdch -> EU
    - newplan -> PR
`

// TestPoolsPlanTakesTheProviderKEBGivesTheRuntime: the pool's base is the
// provider KEB's provider values give the runtime, and what KEB would
// refuse is refused with exit 2, naming the flag or variable and its value.
func TestPoolsPlanTakesTheProviderKEBGivesTheRuntime(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(planRules), 0o600); err != nil {
		t.Fatal(err)
	}
	gcpTrial := map[string]string{"APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER": "GCP"}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string // hyperscalerType, or a part of the refusal
		code int
	}{
		{"free in an Azure platform region", nil, []string{"--plan", "free", "--platform-region", "cf-eu20"}, "azure", exitOK},
		{"free in an AWS platform region", nil, []string{"--plan", "free", "--platform-region", "cf-us10"}, "aws", exitOK},
		{"free naming Azure", nil, []string{"--plan", "free", "--provider", "Azure", "--platform-region", "cf-us10"}, "azure", exitOK},
		{"free in a GCP platform region", nil, []string{"--plan", "free", "--platform-region", "cf-us30"}, `--platform-region "cf-us30": plan "free"`, exitUsage},
		{"free on GCP", nil, []string{"--plan", "free", "--provider", "gcp", "--platform-region", "cf-eu10"}, `--provider "gcp": plan "free"`, exitUsage},
		{"trial on KEB's default", nil, []string{"--plan", "trial", "--platform-region", "cf-eu10"}, "azure", exitOK},
		{"trial on KEB's configured default", gcpTrial, []string{"--plan", "trial", "--platform-region", "cf-eu10"}, "gcp", exitOK},
		{"trial naming its provider", gcpTrial, []string{"--plan", "trial", "--provider", "aws", "--platform-region", "cf-eu10"}, "aws", exitOK},
		{"trial on openstack", nil, []string{"--plan", "trial", "--provider", "openstack"}, `--provider "openstack": plan "trial"`, exitUsage},
		{"trial on a default KEB lacks", map[string]string{"APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER": "aws"},
			[]string{"--plan", "trial"}, "APP_INFRASTRUCTURE_MANAGER_DEFAULT_TRIAL_PROVIDER: plan \"trial\"", exitUsage},
		{"gdch", nil, []string{"--plan", "gdch", "--platform-region", "cf-eu10"}, "gdch", exitOK},
		{"aws named azure", nil, []string{"--plan", "aws", "--provider", "azure"}, `--provider "azure": plan "aws": disagrees with the plan, which always runs on aws`, exitUsage},
		{"a plan newer than the table, with its provider", nil, []string{"--plan", "newplan", "--provider", "alicloud", "--platform-region", "cf-cn40"}, "alicloud_cf-cn40", exitOK},
		{"a plan newer than the table, without", nil, []string{"--plan", "newplan"}, `--plan "newplan": is not in the job's plan table`, exitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"pools", "-o", "json", "--config", config}, tc.args...)
			for k, v := range tc.env { // KEB's variables, where KEB's parser reads them
				t.Setenv(k, v)
			}
			code := execute(context.Background(), args, &out, &errOut, func(k string) string { return tc.env[k] })
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, errOut.String())
			}
			if tc.code != exitOK {
				if msg := lastLogMessage(t, errOut.String()); !strings.Contains(msg, tc.want) {
					t.Fatalf("the refusal does not say %q:\n%s", tc.want, errOut.String())
				}
				return
			}
			var ev ruleEvaluation
			if err := json.Unmarshal(out.Bytes(), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.HyperscalerType != tc.want {
				t.Fatalf("hyperscalerType %q, want %q: %+v", ev.HyperscalerType, tc.want, ev)
			}
			if !strings.Contains(errOut.String(), `hap.rule[4]`) {
				t.Errorf("the start-up warning for the newer plan's entry is missing:\n%s", errOut.String())
			}
		})
	}
}

// lastLogMessage is the msg of the last log line, the error a command ends
// with.
func lastLogMessage(t *testing.T, log string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	var line struct {
		Msg string `json:"msg"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil {
		t.Fatalf("the last log line is not JSON: %v\n%s", err, log)
	}
	return line.Msg
}
