package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// client-go logs through klog; after routeKlog every such line is one JSON
// object of the job's own stream, with the job's fields and levels.
func TestClientGoLogLinesJoinTheJSONStream(t *testing.T) {
	var out bytes.Buffer
	g := &globals{logLevel: "info", logs: &out}
	log, err := g.logger()
	if err != nil {
		t.Fatal(err)
	}
	routeKlog(log)
	t.Cleanup(klog.ClearLogger)

	klog.InfoS("Waited before sending request", "delay", "1.5s")
	klog.ErrorS(nil, "watch of *v1alpha1.CredentialsBinding ended")
	// A request the job cancelled itself is no news: the run's own line
	// says why it stopped.
	klog.ErrorS(fmt.Errorf("reading: %w", context.Canceled), "Unexpected error when reading response body")
	klog.V(4).InfoS("verbose client-go detail")
	klog.Flush()

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines (V(4) dropped at info), got %d:\n%s", len(lines), out.String())
	}
	for i, want := range []struct{ level, msg string }{
		{"INFO", "Waited before sending request"},
		{"ERROR", "watch of *v1alpha1.CredentialsBinding ended"},
	} {
		var line map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &line); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i, err, lines[i])
		}
		if line["level"] != want.level || line["msg"] != want.msg || line["logger"] != "client-go" {
			t.Errorf("line %d: %v, want level %q, msg %q, logger client-go", i, line, want.level, want.msg)
		}
	}
	if !strings.Contains(lines[0], `"delay":"1.5s"`) {
		t.Errorf("klog's key/value pairs must become JSON fields: %s", lines[0])
	}

	// At debug, klog's V levels above 0 come through too.
	out.Reset()
	debug := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&out), zapcore.DebugLevel))
	routeKlog(debug)
	klog.V(1).InfoS("client-go detail at V(1)")
	if !strings.Contains(out.String(), "client-go detail at V(1)") {
		t.Errorf("V(1) missing at debug: %q", out.String())
	}
}
