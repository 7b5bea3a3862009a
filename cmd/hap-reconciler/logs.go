package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/kyma-project/hap-reconciler/internal/logging"
)

// The values of --log-format.
const (
	// logAuto: text when the log stream is a terminal, else JSON; a pod's
	// stream is never a terminal, so a pod logs JSON as KEB does.
	logAuto = "auto"
	logJSON = "json"
	logText = "text"
)

var logFormats = []string{logAuto, logJSON, logText}

// lineBreaks are the line ends of a message and the indent after them.
var lineBreaks = regexp.MustCompile(`\s*\n\s*`)

// logStream is where a command logs: stdout, as KEB does, except for the
// commands whose stdout is their output (report and pools print tables or
// data an operator pipes on, config view the configuration), which log to
// stderr so the output stays whole.
func logStream(command string, stdout, stderr io.Writer) io.Writer {
	switch command {
	case "report", "pools", "version", "config", "view":
		return stderr
	}
	return stdout
}

// checkLogFormat refuses a --log-format that is none of logFormats.
func checkLogFormat(format string) error {
	for _, f := range logFormats {
		if format == f {
			return nil
		}
	}
	return usageError{fmt.Errorf("--log-format: %q is not one of auto, json, text", format)}
}

// textLogs says whether lines to w are written as text: asked for, or auto
// and w a terminal. A format that is no format (refused by checkLogFormat
// before anything logs) counts as auto, for the line saying so.
func textLogs(format string, w io.Writer) bool {
	switch format {
	case logJSON:
		return false
	case logText:
		return true
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newLogger writes KEB-shaped lines (see internal/logging) to w: JSON, or
// text where textLogs says so.
func newLogger(w io.Writer, format string, level zapcore.LevelEnabler) *zap.Logger {
	if textLogs(format, w) {
		return logging.NewText(w, level)
	}
	return logging.New(w, level)
}

// writeErrorLine ends a failed command with one line on the log stream: a
// JSON line at ERROR, so a log query for KEB's errors finds the job's last
// word too, or at a terminal (or with --log-format text) the plain message
// a person reads.
func writeErrorLine(w io.Writer, format string, err error, code int) {
	if textLogs(format, w) {
		// A driver's error may span lines (pgx lists every address it
		// tried): at a terminal it is still one line.
		fmt.Fprintf(w, "hap-reconciler: %s\n", lineBreaks.ReplaceAllString(strings.TrimSpace(err.Error()), " "))
		return
	}
	logging.New(w, zapcore.ErrorLevel).Error("hap-reconciler: "+err.Error(), zap.Int("exitCode", code))
}
