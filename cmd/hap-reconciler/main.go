// Command hap-reconciler keeps KEB's Hyperscaler Account Pool honest: it
// finds drift between KEB's database and Gardener, precomputes the candidate
// table provisioning reads, releases bindings that hold nothing, and exposes
// the pool's metrics.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
