package main

import (
	"context"
	"errors"
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
	quiet := log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return withoutCancellations{c} }))
	klog.SetLogger(zapr.NewLogger(quiet.Named("client-go")))
}

// withoutCancellations drops client-go's lines about a request the job
// cancelled itself ("Unexpected error when reading response body: context
// canceled" when one list failed and the run stopped the others): the run
// says what went wrong in its own line.
type withoutCancellations struct{ zapcore.Core }

func (c withoutCancellations) With(fields []zapcore.Field) zapcore.Core {
	return withoutCancellations{c.Core.With(fields)}
}

func (c withoutCancellations) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c withoutCancellations) Write(e zapcore.Entry, fields []zapcore.Field) error {
	for _, f := range fields {
		// The transport does not always wrap the context's error; its text
		// is the same.
		if err, ok := f.Interface.(error); ok && (errors.Is(err, context.Canceled) || err.Error() == context.Canceled.Error()) {
			return nil
		}
	}
	return c.Core.Write(e, fields)
}
