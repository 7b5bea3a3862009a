package main

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// kebEncoderConfig shapes each line as KEB's own logs are shaped (KEB logs
// with log/slog's JSON handler on stdout): keys time, level and msg, levels
// spelled DEBUG, INFO, WARN, ERROR, RFC 3339 times, so that the queries and
// alerts written for KEB's logs find the job's lines as well. zap stays the
// job's logger (its fields are used throughout, and klog reaches it through
// zapr); only its encoding is KEB's.
func kebEncoderConfig() zapcore.EncoderConfig {
	return zapcore.EncoderConfig{
		TimeKey:        "time",
		LevelKey:       "level",
		NameKey:        "logger",
		MessageKey:     "msg",
		LineEnding:     zapcore.DefaultLineEnding,
		EncodeLevel:    zapcore.CapitalLevelEncoder,
		EncodeTime:     zapcore.RFC3339NanoTimeEncoder,
		EncodeDuration: zapcore.SecondsDurationEncoder,
		EncodeName:     zapcore.FullNameEncoder,
	}
}

func newLogger(w io.Writer, level zapcore.LevelEnabler) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(kebEncoderConfig()), zapcore.AddSync(w), level))
}

// logStream is where a command logs: stdout, as KEB does, except for the
// commands whose stdout is their output (report and pools print tables or
// JSON an operator pipes on), which log to stderr so the output stays whole.
func logStream(command string, stdout, stderr io.Writer) io.Writer {
	switch command {
	case "report", "pools", "version":
		return stderr
	}
	return stdout
}

// writeErrorLine ends a failed command with one JSON line at ERROR on the
// log stream, so a log query for KEB's errors finds the job's last word too.
func writeErrorLine(w io.Writer, err error, code int) {
	newLogger(w, zapcore.ErrorLevel).Error("hap-reconciler: "+err.Error(), zap.Int("exitCode", code))
}
