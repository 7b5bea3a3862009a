package main

import (
	"strings"
	"testing"
)

// check refuses a policy that does not come from KEB's variables: on the
// landscape the chart sets them, and a hap block in the job's own file
// would let the job rank by limits KEB does not apply. It says so in its
// one JSON error line, before it reads anything.
func TestCheckWantsKEBsVariables(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	code, _, logs := s.cli(t, "check")
	line := oneLine(t, code, logs)
	if !strings.Contains(line, "does not come from KEB's APP_HAP_MULTI_HYPERSCALER_ACCOUNT_* variables") ||
		!strings.Contains(line, `source: "file `) {
		t.Errorf("got %q", line)
	}
}
