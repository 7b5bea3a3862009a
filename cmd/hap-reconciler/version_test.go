package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The binary as `make build` (and the Dockerfile, through the same -X
// flags) builds it says, for --version and version alike, the version and
// the commit it was built from.
func TestVersionAndCommitFromTheBuild(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", "../.."}, args...)...).Output()
		if err != nil {
			t.Skipf("git %v: %v (not a git checkout)", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	head := git("rev-parse", "HEAD")
	bin := filepath.Join(t.TempDir(), "hap-reconciler")
	build := exec.Command("make", "-C", "../..", "build", "OUT="+bin, "VERSION=0.2.0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("hap-reconciler %v: %v", args, err)
		}
		want := "hap-reconciler 0.2.0 (commit " + head + ", go"
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("hap-reconciler %v printed %q, want it to start with %q", args, out, want)
		}
	}
}

// Without -X main.commit the commit comes from Go's build information, and
// --version is a flag of the root command, not an unknown one.
func TestVersionFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := execute(context.Background(), []string{"--version"}, &out, &errOut, func(string) string { return "" }); code != exitOK {
		t.Fatalf("--version: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "hap-reconciler "+version+" (commit ") || !strings.Contains(got, buildCommit()) {
		t.Errorf("--version printed %q", got)
	}
}
