package provisioning

import (
	"context"
	"errors"
	"time"
)

// DefaultTimeout is how long a Client lets one statement run when it names
// no Timeout. A pick is one indexed statement; two seconds is ample and
// still short beside KEB's step, which falls back to its live path.
const DefaultTimeout = 2 * time.Second

// DefaultClaimAttempts is how often a Client tries RecordClaim when it
// names no ClaimAttempts.
const DefaultClaimAttempts = 3

// claimRetryPause is the pause before RecordClaim's second attempt; it
// doubles with each further one.
const claimRetryPause = 200 * time.Millisecond

// Client is the read path configured once: the connection, the schema, the
// oldest table to answer from and how long each statement may take. Its
// methods fill what a call leaves empty and give each statement its own
// timeout.
type Client struct {
	DB Querier
	// Schema holds the job's tables; "" means DefaultSchema.
	Schema string
	// MaxAge is the oldest table NextBinding answers from; 0 means
	// DefaultMaxAge.
	MaxAge time.Duration
	// Timeout bounds each statement; 0 means DefaultTimeout.
	Timeout time.Duration
	// ClaimAttempts bounds RecordClaim's tries; 0 means
	// DefaultClaimAttempts.
	ClaimAttempts int
}

func (c Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c Client) request(req Request) Request {
	if req.Schema == "" {
		req.Schema = c.Schema
	}
	if req.MaxAge == 0 {
		req.MaxAge = c.MaxAge
	}
	return req
}

// NextBinding is the package's NextBinding within the client's timeout.
func (c Client) NextBinding(ctx context.Context, req Request) (Pick, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	return NextBinding(ctx, c.DB, c.request(req))
}

// RecordClaim is the package's RecordClaim, tried up to ClaimAttempts times
// with a pause between, each try within the client's timeout. It does not
// end with ctx: KEB calls it after a claim in Gardener that may have used
// up the caller's deadline, and a claim the table never learns makes the
// GA's next cluster claim another account. Retrying is safe, the statement
// is idempotent per instance.
func (c Client) RecordClaim(ctx context.Context, claim Claim) error {
	claim.Request = c.request(claim.Request)
	ctx = context.WithoutCancel(ctx)
	attempts := c.ClaimAttempts
	if attempts <= 0 {
		attempts = DefaultClaimAttempts
	}
	pause := claimRetryPause
	var err error
	for attempt := 1; ; attempt++ {
		err = c.recordClaimOnce(ctx, claim)
		if err == nil || attempt >= attempts || errors.Is(err, errRefused) {
			return err
		}
		time.Sleep(pause)
		pause *= 2
	}
}

func (c Client) recordClaimOnce(ctx context.Context, claim Claim) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	return RecordClaim(ctx, c.DB, claim)
}

// WithdrawBinding is the package's WithdrawBinding within the client's
// timeout.
func (c Client) WithdrawBinding(ctx context.Context, w Withdrawal) error {
	if w.Schema == "" {
		w.Schema = c.Schema
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	return WithdrawBinding(ctx, c.DB, w)
}
