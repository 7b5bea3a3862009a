package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"k8s.io/apimachinery/pkg/util/wait"
)

// readRetry is how often a read is repeated after a transient failure: 4
// attempts over about 1.5 s, enough for a connection the server dropped (a
// failover, a restart, a terminated backend) to be replaced by a new one.
var readRetry = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 4, Cap: 5 * time.Second}

// retryRead runs read, which must have no effect besides reading, and
// repeats it with backoff while it fails transiently. Any other failure is
// returned at once; so is the last transient one.
func retryRead(ctx context.Context, read func() error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, readRetry, func(context.Context) (bool, error) {
		last = read()
		if last == nil {
			return true, nil
		}
		if ctx.Err() == nil && transientRead(last) {
			return false, nil
		}
		return false, last
	})
	if err != nil && last != nil && wait.Interrupted(err) {
		return last
	}
	return err
}

// transientRead reports whether a failed read may succeed when repeated on
// a fresh connection.
func transientRead(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", // serialization failure, deadlock
			"57P01", "57P02", "57P03": // admin or crash shutdown, server starting up
			return true
		}
		return pgErr.Code[:2] == "08" // connection exceptions
	}
	var netErr net.Error
	return pgconn.SafeToRetry(err) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &netErr)
}
