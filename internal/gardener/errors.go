package gardener

import "errors"

// ErrConflict marks an update refused because the object changed since the
// caller read it.
var ErrConflict = errors.New("object changed since it was read")

// IsConflict reports whether err is an optimistic-concurrency conflict.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }
