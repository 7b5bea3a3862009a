package app

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// A watch that breaks while serve runs is news (warn); the same break as
// serve stops is the stop itself. A clean SIGTERM logged two such warnings,
// one per kind, whenever the streams noticed the stop before the watch did.
func TestAWatchBreakingAsServeStopsIsNoWarning(t *testing.T) {
	broke := errors.New("watch of shoots ended: http2: response body closed")
	for _, c := range []struct {
		stopping bool
		want     zapcore.Level
	}{{false, zap.WarnLevel}, {true, zap.DebugLevel}} {
		core, logs := observer.New(zap.DebugLevel)
		ctx, stop := context.WithCancel(context.Background())
		if c.stopping {
			stop()
		}
		health := &watchHealthLog{log: zap.New(core), broken: map[string]bool{}, stopping: ctx}
		health.change("shoots", broke)
		stop()
		if all := logs.All(); len(all) != 1 || all[0].Level != c.want {
			t.Errorf("stopping=%v: logged %v, want one line at %s", c.stopping, all, c.want)
		}
	}
}
