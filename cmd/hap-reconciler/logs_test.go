package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Every line is JSON shaped like KEB's (time, level in capitals, msg), on
// stdout, the last error line included; report and pools keep stdout for
// their output and log to stderr.
func TestLogsLookLikeKEBs(t *testing.T) {
	for _, c := range []struct {
		args     []string
		onStdout bool
	}{
		{[]string{"run", "--namespace", "garden-x", "--database-url", "postgres://u@127.0.0.1:1/db", "--kubeconfig", "/nonexistent"}, true},
		{[]string{"migrate", "--log-level", "loud"}, true},
		{[]string{"report", "--no-such-flag"}, false},
	} {
		var out, errOut bytes.Buffer
		code := execute(context.Background(), c.args, &out, &errOut, func(string) string { return "" })
		logs, other := out.String(), errOut.String()
		if !c.onStdout {
			logs, other = other, logs
		}
		if code == exitOK || other != "" {
			t.Errorf("%v: exit %d, and on the other stream %q; want a failure logged on one stream only", c.args, code, other)
		}
		lines := strings.Split(strings.TrimSpace(logs), "\n")
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%v: a line that is not JSON: %q", c.args, l)
			}
			if _, ok := m["time"].(string); !ok || m["msg"] == nil || !strings.Contains("DEBUG INFO WARN ERROR", m["level"].(string)) {
				t.Errorf("%v: line %q lacks KEB's time, level (capitals) or msg", c.args, l)
			}
			if _, ok := m["ts"]; ok {
				t.Errorf("%v: line %q still carries zap's ts", c.args, l)
			}
		}
		var last map[string]any
		_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
		if last["level"] != "ERROR" || !strings.HasPrefix(last["msg"].(string), "hap-reconciler: ") {
			t.Errorf("%v: last line %v, want the error at ERROR", c.args, last)
		}
	}
}
