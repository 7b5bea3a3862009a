package main

import (
	"errors"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
)

// Exit codes.
const (
	exitOK = 0
	// exitFailed: the run failed; whatever it could not see whole, it left
	// unchanged.
	exitFailed = 1
	// exitUsage: bad flags or configuration; nothing ran.
	exitUsage = 2
)

// usageError marks errors in flags, as opposed to failures of a run.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func exitCode(err error) int {
	var cfgErr *config.Error
	var usage usageError
	var input *app.InputError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &cfgErr), errors.As(err, &usage), errors.As(err, &input):
		return exitUsage
	case strings.HasPrefix(err.Error(), "unknown command"):
		// cobra reports an unknown subcommand with a plain error.
		return exitUsage
	}
	return exitFailed
}
