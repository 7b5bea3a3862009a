// Package hint carries, with a failure an operator meets, one line saying
// what to check. The adapters that know a system's failures attach it where
// the failure arises (internal/gardener for the Gardener API, internal/db
// for PostgreSQL); whoever prints an error reads the hint through Of, or
// through any error type offering Hint() string, with errors.As.
package hint

import (
	"errors"
	"fmt"
)

// Error is a failure with what to check, followed by its cause.
type Error struct {
	hint string
	err  error
}

// New returns err with the hint format and args make.
func New(err error, format string, args ...any) *Error {
	return &Error{hint: fmt.Sprintf(format, args...), err: err}
}

func (e *Error) Error() string { return e.hint + " (" + e.err.Error() + ")" }
func (e *Error) Unwrap() error { return e.err }

// Hint is what to check.
func (e *Error) Hint() string { return e.hint }

// Of returns what to check when err, or an error it wraps, carries a hint.
func Of(err error) (string, bool) {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint(), true
	}
	return "", false
}

// Has reports whether err already says what to check: an adapter leaves
// such an error as it is.
func Has(err error) bool {
	_, ok := Of(err)
	return ok
}
