// Command hap-demo shows hap-reconciler at work on one machine, with
// nothing installed by hand: a throwaway PostgreSQL with KEB's instances
// table and a Gardener project (a local kube-apiserver with Gardener's own
// gardener-apiserver behind it when both are built,
// else an export file), seeded with a small landscape that has something to
// show. It runs every job once, prints the report, serves the metrics, and
// removes everything it started on exit or Ctrl-C. `make demo` runs it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
