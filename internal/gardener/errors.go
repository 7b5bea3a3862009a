package gardener

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// errConflict marks an update refused because the object changed since the
// caller read it.
var errConflict = errors.New("object changed since it was read")

// isConflict reports whether err is an optimistic-concurrency conflict.
func isConflict(err error) bool { return errors.Is(err, errConflict) }

// isRefused reports whether err is the API server's definite refusal of a
// write: it answered, and the answer says the write was not applied. Any
// other failure (a broken connection, a timeout, a 5xx, a 429) leaves it
// unknown whether the write landed, and the caller must find out by reading
// the object back.
func isRefused(err error) bool {
	return isConflict(err) ||
		apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) ||
		apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsUnauthorized(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsUnsupportedMediaType(err)
}
