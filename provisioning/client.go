package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"
)

// DefaultTimeout is how long a Client lets one statement, or one call to
// Gardener, run when it names no Timeout. A pick is one indexed statement;
// two seconds is ample and still short beside KEB's step, which falls back
// to its live path.
const DefaultTimeout = 2 * time.Second

// DefaultSeenWithin is how recently the table must have seen Gardener for
// NextBinding to trust it without asking Gardener, when the Client names no
// SeenWithin. KEB's live path trusts its own list for longer: between the
// resolve step's list and the shoot's creation KEB discovers the zones with
// the account's credentials, creates the Runtime resource, and
// infrastructure-manager creates the shoot, seconds to tens of seconds in
// which a change of the binding goes unseen as well.
const DefaultSeenWithin = 10 * time.Second

// Client is the read path configured once: the connection, Gardener to
// confirm with, the schema, the oldest table to answer from and how long
// each call may take. On a pool
// (*sql.DB) it prepares each statement once and holds it until Close, so
// that PostgreSQL can keep one plan per connection rather than plan every
// pick, as it must for lib/pq's unnamed statements. Use it by pointer; it
// must not be copied after first use.
type Client struct {
	DB Querier
	// Gardener confirms the table's answers when the table had not seen
	// Gardener within SeenWithin (NextBinding): KEB's own client of its
	// Gardener project namespace. nil: such answers are ErrUnconfirmed, and
	// KEB takes its live path.
	Gardener Gardener
	// Schema holds the job's tables; "" means the job's default, hap.
	Schema string
	// MaxAge is the oldest table NextBinding answers from; 0 means
	// DefaultMaxAge.
	MaxAge time.Duration
	// Timeout bounds each statement and each call to Gardener; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// SeenWithin is how recently the table must have seen every change of
	// Gardener's bindings (serve's watch proves it) for NextBinding to trust
	// its tenant, pool and dirty state without asking Gardener; 0 means
	// DefaultSeenWithin, a negative value has Gardener confirm every answer.
	SeenWithin time.Duration
	// HoldClaims makes NextBinding hold the claim of a GA and pool for the
	// request that reaches ClaimNew first (a lease of ClaimLease), and answer
	// every other request for them ErrClaimPending until it is recorded: one
	// account claimed however many of KEB's workers ask. KEB then ends every
	// ClaimNew with RecordClaim or AbandonClaim. Without it ClaimNew holds
	// nothing, and each request that gets it claims as KEB's live path does.
	HoldClaims bool
	// ClaimLease is how long the request that reaches ClaimNew first holds
	// the claim of its GA and pool before another may take it over; 0
	// means DefaultClaimLease. KEB claims and calls RecordClaim within it.
	ClaimLease time.Duration
	// ClaimRetry is the longest Pick.RetryAfter NextBinding answers with
	// ErrClaimPending, when another request holds the claim of the same GA
	// and pool; 0 means DefaultClaimRetry.
	ClaimRetry time.Duration

	mu            sync.Mutex
	prepared      map[string]*sql.Stmt
	kebIndex      lookedAt
	schemaVersion lookedAt
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// trusts says whether pick came from a table that had seen Gardener
// recently enough to stand without Gardener's confirmation, and rests on
// rows the snapshot vouches for (Pick's unvouched): a binding no recorded
// claim wrote; for ClaimNew or a guard, the GA's group whole (none of its
// rows withdrawn) and no recorded claim in the pool.
func (c *Client) trusts(pick Pick) bool {
	if pick.unvouched {
		return false
	}
	bound := c.seenWithin()
	return bound > 0 && pick.seenKnown && pick.seen <= bound
}

// seenWithin is SeenWithin, or its default.
func (c *Client) seenWithin() time.Duration {
	if c.SeenWithin == 0 {
		return DefaultSeenWithin
	}
	return c.SeenWithin
}

// reserveWithin is how recently the table must have seen Gardener for a
// pick to reserve: bounded only for a client without Gardener, which
// cannot use an answer it would have to confirm.
func (c *Client) reserveWithin() sql.NullFloat64 {
	if c.Gardener != nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: c.seenWithin().Seconds(), Valid: true}
}

// Propose is the table's answer for req alone, unconfirmed, within the
// client's timeout: the binding it reserves for the instance, ClaimNew, or
// an error. It is for tests and measurements of the statement;
// NextBinding is what KEB calls.
func (c *Client) Propose(ctx context.Context, req Request) (Pick, error) {
	return c.propose(ctx, req, sql.NullFloat64{})
}

// propose is Propose reserving only from a table that had seen Gardener
// within reserveWithin seconds, when that is valid.
func (c *Client) propose(ctx context.Context, req Request, reserveWithin sql.NullFloat64) (Pick, error) {
	if err := checkRequest(req); err != nil {
		return Pick{}, err
	}
	if c.DB == nil {
		return Pick{}, errors.New("propose: the client has no database")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	return c.pick(ctx, req, reserveWithin)
}

// query runs text, prepared once per pool when DB is one. A connection or
// transaction (*sql.Conn, *sql.Tx) runs it as it is, and so does a pool
// when preparing fails: the statement unprepared then says what is wrong.
func (c *Client) query(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	rows, err := c.run(ctx, text, args...)
	if err != nil {
		c.schemaMayHaveMoved()
	}
	return rows, err
}

func (c *Client) run(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	pool, ok := c.DB.(*sql.DB)
	if !ok {
		return c.DB.QueryContext(ctx, text, args...)
	}
	stmt, err := c.statement(ctx, pool, text)
	if err != nil {
		return pool.QueryContext(ctx, text, args...)
	}
	return stmt.QueryContext(ctx, args...)
}

func (c *Client) statement(ctx context.Context, pool *sql.DB, text string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if stmt, ok := c.prepared[text]; ok {
		return stmt, nil
	}
	stmt, err := pool.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	if c.prepared == nil {
		c.prepared = map[string]*sql.Stmt{}
	}
	c.prepared[text] = stmt
	return stmt, nil
}

// Close releases the statements the client prepared; the pool stays open.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for text, stmt := range c.prepared {
		errs = append(errs, stmt.Close())
		delete(c.prepared, text)
	}
	return errors.Join(errs...)
}
