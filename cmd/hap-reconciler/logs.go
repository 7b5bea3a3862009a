package main

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/hap-reconciler/internal/logging"
)

// newLogger writes KEB-shaped JSON lines (see internal/logging).
func newLogger(w io.Writer, level zapcore.LevelEnabler) *zap.Logger {
	return logging.New(w, level)
}

// logStream is where a command logs: stdout, as KEB does, except for the
// commands whose stdout is their output (report and pools print tables or
// JSON an operator pipes on), which log to stderr so the output stays whole.
func logStream(command string, stdout, stderr io.Writer) io.Writer {
	switch command {
	case cmdReport, cmdPools, "version":
		return stderr
	}
	return stdout
}

// writeErrorLine ends a failed command with one JSON line at ERROR on the
// log stream, so a log query for KEB's errors finds the job's last word too.
func writeErrorLine(w io.Writer, err error, code int) {
	newLogger(w, zapcore.ErrorLevel).Error("hap-reconciler: "+err.Error(), zap.Int("exitCode", code))
}
