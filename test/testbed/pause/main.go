// Command pause is the sandbox ("pause") container of the e2e node
// (docs/e2e.md): it holds a pod's namespaces and does nothing else until the
// container runtime stops it. Kubernetes' own pause image is in a registry
// the e2e cannot reach, so hack/build-pause-image.sh builds this one.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// PID 1 of a container gets no default signal handling: without these
	// handlers SIGTERM would be ignored and every pod stop would wait for
	// SIGKILL.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
