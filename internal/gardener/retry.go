package gardener

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// defaultRetry is how often, and how patiently, a read is repeated after a
// transient failure: 4 attempts over about 1.5 s, enough to ride out a
// load balancer's hiccup or an API server replica restarting, short enough
// that a run against a dead API fails within seconds.
var defaultRetry = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 4, Cap: 5 * time.Second}

// withRetry replaces defaultRetry; Steps 1 means a single attempt.
func withRetry(b wait.Backoff) Option { return func(c *Client) { c.retry = b } }

// anonymousUser is how a Kubernetes API server names a caller whose
// credentials it did not see, in a 403's message.
const anonymousUser = `User "system:anonymous"`

// readWithRetry runs read, each attempt bounded by the request timeout, and
// repeats it with backoff while it fails transiently. Any other failure (a
// 403, a 404, an expired continue token) is returned at once: repeating
// cannot change it, and the caller has its own handling for the last one.
// read keeps what it reads itself, so an attempt may stream its answer.
func (c *Client) readWithRetry(ctx context.Context, read func(ctx context.Context) error) error {
	var last error
	attempts := 0
	err := wait.ExponentialBackoffWithContext(ctx, c.retry, func(ctx context.Context) (bool, error) {
		attempts++
		attemptCtx, cancel := context.WithTimeout(ctx, c.requestTimeout)
		defer cancel()
		last = read(attemptCtx)
		switch {
		case last == nil:
			return true, nil
		case ctx.Err() == nil && transient(last):
			return false, nil
		}
		return false, last
	})
	if err == nil {
		return nil
	}
	if last != nil && wait.Interrupted(err) {
		// Out of attempts or out of time: the last failure says why.
		return fmt.Errorf("%w (gave up after %d attempt(s))", last, attempts)
	}
	return err
}

// transient reports whether a failed read may succeed when repeated: the
// server was overloaded or briefly unavailable, or the connection broke,
// also halfway through a page's body (an unexpected end of the JSON). A 403
// for system:anonymous is one too: the client always sends its
// credentials, so a server that saw none has lost them on the way, as
// gardener-apiserver does for a moment after it restarts, before it has
// loaded the front proxy's CA through which kube-apiserver passes the
// caller on. A 403 for the job's own user is returned at once.
func transient(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 429 || code >= 500 || (code == 403 && strings.Contains(status.Status().Message, anonymousUser))
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		errors.Is(err, context.DeadlineExceeded) || utilnet.IsTimeout(err)
}
