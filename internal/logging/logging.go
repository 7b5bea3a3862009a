// Package logging is the job's log line shape: KEB's. KEB logs with
// log/slog's JSON handler on stdout; the job's lines carry the same keys
// (time, level, msg) and level spelling (DEBUG, INFO, WARN, ERROR), so the
// queries and alerts written for KEB's logs find the job's lines as well.
//
// zap stays the job's logger: its typed fields are used throughout, and
// klog (client-go) reaches it through zapr; only the encoding is KEB's.
package logging

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// encoderConfig is zap's JSON encoding with KEB's keys, level spelling and
// RFC 3339 times.
func encoderConfig() zapcore.EncoderConfig {
	return zapcore.EncoderConfig{
		TimeKey:     "time",
		LevelKey:    "level",
		NameKey:     "logger",
		MessageKey:  "msg",
		LineEnding:  zapcore.DefaultLineEnding,
		EncodeLevel: zapcore.CapitalLevelEncoder,
		EncodeTime:  zapcore.RFC3339NanoTimeEncoder,
		// Integer nanoseconds, as slog's JSON handler writes a time.Duration.
		EncodeDuration: zapcore.NanosDurationEncoder,
		EncodeName:     zapcore.FullNameEncoder,
	}
}

// New is a logger writing KEB-shaped JSON lines at level and above to w.
func New(w io.Writer, level zapcore.LevelEnabler) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(encoderConfig()), zapcore.AddSync(w), level))
}

// NewText is a logger writing the same entries as plain text lines (time,
// level, message, then the fields as JSON), for a person at a terminal.
func NewText(w io.Writer, level zapcore.LevelEnabler) *zap.Logger {
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(encoderConfig()), zapcore.AddSync(w), level))
}
