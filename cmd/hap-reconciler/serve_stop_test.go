package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// serve whose first list of Gardener is refused (an identity without
// access) says why, with the hint a run gives, and ends promptly on SIGTERM
// instead of waiting out the first fill's five minutes.
func TestServeStopsOnSIGTERMWhileItsFirstListIsRefused(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	var log testbed.SyncBuffer
	g := s.globals(&log)
	g.kubeconfig = impersonating(t, "nobody")
	g.overrides.listen = "127.0.0.1:0"
	srv, err := g.openServer(testContext(t), dryRunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ln, err := listenOn(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	waitFor(t, "the refused first list to be logged with its hint", func() bool {
		return strings.Contains(log.String(), "was refused") && strings.Contains(log.String(), "no access to")
	})

	sigterm()
	stopping := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve stopped with %v, want a clean stop", err)
		}
		t.Logf("serve stopped %s after SIGTERM", time.Since(stopping))
	case <-time.After(10 * time.Second): // the bound; the first fill alone would wait 5 minutes
		t.Fatal("serve did not stop within 10 s of SIGTERM during its first fill")
	}
	if last := lastLogMessage(t, log.String()); last != "stopped before the first list of Gardener was complete; nothing was run" {
		t.Errorf("last line %q", last)
	}
}

// A clean SIGTERM of a serve that runs logs no warning, and one final line.
func TestServeStopsCleanlyWithOneFinalLine(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	var log testbed.SyncBuffer
	srv, ln := s.openToServe(t, &log, dryRunFlags{})
	ctx, sigterm := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	waitFor(t, "the first candidates run", func() bool { return strings.Contains(log.String(), "candidate table rewritten") })
	stopAt := len(log.String())
	sigterm()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	srv.Close()
	after := log.String()[stopAt:]
	for _, line := range strings.Split(strings.TrimSpace(after), "\n") {
		var entry struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if entry.Level == "WARN" || entry.Level == "ERROR" {
			t.Errorf("a clean stop logged %s %q", entry.Level, entry.Msg)
		}
	}
	if last := lastLogMessage(t, after); last != "stopped" {
		t.Errorf("last line %q, want \"stopped\"", last)
	}
}
