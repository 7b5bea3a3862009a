package testbed

import (
	"flag"
	"testing"
)

// Short reports whether this test binary runs without the test bed:
// `go test -short` runs every package's fast tests (pure decisions, and the
// jobs on in-memory fakes) without starting etcd, kube-apiserver or
// PostgreSQL. It parses the flags, as a TestMain has not yet.
func Short() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	return testing.Short()
}

// Require skips tb under `go test -short`, which starts no test bed. Every
// test that uses the bed (etcd, kube-apiserver or PostgreSQL) calls it
// first, most of them through their package's testContext or scene.
func Require(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the real test bed (etcd, kube-apiserver, PostgreSQL), which go test -short does not start")
	}
}
