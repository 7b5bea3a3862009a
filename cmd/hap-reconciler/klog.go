package main

import (
	"flag"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// routeKlog sends client-go's own log lines (klog: throttling, retries,
// watch restarts, deprecation warnings) through the job's zap logger, so a
// pod prints one JSON stream. zapr logs klog's V(n) at zap level -n, so at
// --log-level debug klog's V(1) lines come through as well (klog itself
// must then let them pass); anything more verbose stays off.
func routeKlog(log *zap.Logger) {
	verbosity := "0"
	if log.Core().Enabled(zapcore.DebugLevel) {
		verbosity = "1"
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", verbosity)
	klog.SetLogger(zapr.NewLogger(log.Named("client-go")))
}
