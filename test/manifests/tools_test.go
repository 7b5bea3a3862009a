package manifests_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// repoRoot is the module root; go test runs in the package directory.
const repoRoot = "../.."

// ensureTool returns the path of name, running the repository's install
// script for it when it is not on PATH: CI may run on a fresh machine. The
// script prints the path as its last line.
func ensureTool(t *testing.T, name, script string) string {
	t.Helper()
	// go test -short installs and builds nothing.
	testbed.Require(t)
	if path, err := exec.LookPath(name); err == nil {
		return path
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot, "hack", script))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s is missing and hack/%s failed: %v\n%s", name, script, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// runErr runs a command and returns its combined output and error.
func runErr(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// run runs a command and fails the test with its output when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}
