// Package provisioning is the read path KEB calls when it provisions a
// cluster. The candidate table the hap-reconciler job keeps proposes a
// binding in one SQL statement, counting KEB's instances at that moment.
// A table that had seen Gardener within Client.SeenWithin is trusted as it
// stands; an older one is confirmed by Gardener, through KEB's own client,
// before KEB provisions on it, or sent to KEB's live path by a client
// without Gardener (Client.NextBinding). It needs nothing but the standard
// library, so KEB can import it as it is.
package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// Querier is what the statements need of a connection: *sql.DB, *sql.Conn
// and *sql.Tx all have it. Outside a transaction, or in a READ COMMITTED
// one, is what the statements are built for; in a REPEATABLE READ or
// SERIALIZABLE transaction a concurrent pick of the same row makes one fail
// with a serialization error instead of waiting.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Request says which cluster is being placed and in which pool.
type Request struct {
	// InstanceID makes the pick idempotent: a retry for the same instance
	// gets the binding it was given before. KEB's instance row must exist
	// when it asks (KEB creates it at the provision request): a
	// reservation counts while that row is active and carries no binding.
	InstanceID string
	// GlobalAccountID is the GA whose bindings to choose from; "" means the
	// shared pool.
	GlobalAccountID string
	HyperscalerType string
	EUAccess        bool
	// ProviderType is the runtime's provider (KEB's
	// operation.ProviderValues.ProviderType); when set, a binding whose
	// provider.type Gardener reports as another is never used: Gardener
	// would refuse the shoot on it.
	ProviderType string
	// Account is KEB's multi-account decision for this runtime (AccountFor):
	// the limit and the guard then come from KEB's configuration, as KEB's
	// live path applies them. nil: the table's, decided with the job's
	// configuration (hap-reconciler check says whether the two agree).
	Account *Account
}

// Account is what KEB's multi-account configuration says of one runtime.
type Account struct {
	// MultiAccount: the GA is on the allowlist
	// (MultiAccountConfig.IsGlobalAccountAllowed). Without it the GA has no
	// limit and keeps the first of its bindings by name.
	MultiAccount bool
	// Limit is KEB's LimitForProvider for the runtime's provider type
	// (operation.ProviderValues.ProviderType).
	Limit int
	// MinBindingsForGuard is KEB's guard; 0 means none.
	MinBindingsForGuard int
}

// MultiAccountConfig is the part of KEB's multi-account configuration
// (common/hyperscaler/multiaccount, *MultiAccountConfig) AccountFor reads.
type MultiAccountConfig interface {
	IsGlobalAccountAllowed(globalAccountID string) bool
	LimitForProvider(providerType string) int
}

// AccountFor is KEB's multi-account decision for a runtime of
// globalAccountID whose provider type is providerType: what
// resolveWithMultiAccountSupport applies.
func AccountFor(cfg MultiAccountConfig, minBindingsForGuard int, globalAccountID, providerType string) *Account {
	if cfg == nil || !cfg.IsGlobalAccountAllowed(globalAccountID) {
		return &Account{}
	}
	return &Account{MultiAccount: true, Limit: cfg.LimitForProvider(providerType), MinBindingsForGuard: minBindingsForGuard}
}

// limits is the dedicated pick's $6..$8: whether the table's limit and
// guard apply, KEB's limit (nil: none) and KEB's guard (0: none).
func (req Request) limits() (table bool, limit sql.NullInt64, minGuard int) {
	switch a := req.Account; {
	case a == nil:
		return true, sql.NullInt64{}, 0
	case !a.MultiAccount:
		return false, sql.NullInt64{}, 0
	default:
		return false, sql.NullInt64{Int64: int64(a.Limit), Valid: true}, a.MinBindingsForGuard
	}
}

// DefaultMaxAge is the oldest table NextBinding answers from when the Client
// names no MaxAge: three runs of the chart's ten-minute CronJob, so one
// failed run goes unnoticed by provisioning and two in a row do not.
const DefaultMaxAge = 30 * time.Minute

// maxAge is MaxAge, or its default.
func (c *Client) maxAge() time.Duration {
	if c.MaxAge <= 0 {
		return DefaultMaxAge
	}
	return c.MaxAge
}

func (req Request) shared() bool { return req.GlobalAccountID == "" }

// Pick is the table's answer, and once confirmed, NextBinding's.
type Pick struct {
	// Binding is the binding to provision the cluster on; "" with ClaimNew.
	Binding string
	// ClaimNew: none of the GA's bindings in the pool is below its limit;
	// KEB claims a new binding from the pool, then calls RecordClaim.
	// Never for a shared pool.
	ClaimNew bool
	// Held names, with ClaimNew or ErrGuarded, the GA's bindings of the pool
	// the table holds, all at their limit (ClaimNew) or empty (the guard),
	// in byte order; none means its first binding of the pool.
	Held []string
	// TableAge is the age of the snapshot the table was computed from, by
	// the database's clock, when the statement read it.
	TableAge time.Duration
	// Confirmed: Gardener was asked in this call and agreed (NextBinding);
	// false when the table had seen Gardener within Client.SeenWithin and
	// was trusted as it stands.
	Confirmed bool
	// seen is how long before the statement the table had seen every
	// change of Gardener's bindings; seenKnown is false when it never has.
	seen      time.Duration
	seenKnown bool
	// hidden: some of the GA's rows of the pool are withdrawn, so the
	// table's group may lack a binding Gardener shows as the GA's.
	hidden bool
}

// lostRaceAttempts bounds how often a pick asks again after losing a race
// with a concurrent call for the same instance, or after dropping a void
// reservation; the next ask finds the winner's reservation or picks.
const lostRaceAttempts = 3

// proposal is one row the pick statements answer, read by column name.
type proposal struct {
	binding        sql.NullString
	void, picked   bool
	guarded        sql.NullBool
	held           sql.NullString
	withdrawn      sql.NullInt64
	age            sql.NullFloat64
	seenAge        sql.NullFloat64
	dedicatedPicks bool
}

func (p *proposal) columns() map[string]any {
	cols := map[string]any{"binding": &p.binding, "void": &p.void, "picked": &p.picked, "age": &p.age, "seen_age": &p.seenAge}
	if p.dedicatedPicks {
		cols["guarded"] = &p.guarded
		cols["held"] = &p.held
		cols["withdrawn"] = &p.withdrawn
	}
	return cols
}

func checkRequest(req Request) error {
	if strings.TrimSpace(req.InstanceID) == "" {
		return errors.New("next binding: instance id is empty")
	}
	if strings.TrimSpace(req.HyperscalerType) == "" {
		return fmt.Errorf("next binding for instance %q: hyperscaler type is empty", req.InstanceID)
	}
	return nil
}

// pick runs the pick for req, dropping a void reservation and asking again.
// reserveWithin, when valid, is how recently in seconds the table must have
// seen Gardener for the pick to reserve: an older table answers
// ErrUnconfirmed and reserves nothing.
func (c *Client) pick(ctx context.Context, req Request, reserveWithin sql.NullFloat64) (Pick, error) {
	texts, err := pickSQL(c.Schema)
	if err != nil {
		return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
	}
	maxAge := c.maxAge()
	for attempt := 0; attempt < lostRaceAttempts; attempt++ {
		p := proposal{dedicatedPicks: !req.shared()}
		var rows *sql.Rows
		if req.shared() {
			rows, err = c.query(ctx, texts.shared, req.InstanceID, req.HyperscalerType, req.EUAccess, maxAge.Seconds(), reserveWithin)
		} else {
			table, limit, minGuard := req.limits()
			rows, err = c.query(ctx, texts.dedicated, req.InstanceID, req.HyperscalerType, req.EUAccess, req.GlobalAccountID,
				maxAge.Seconds(), table, limit, minGuard, reserveWithin)
		}
		if err == nil {
			err = scanNamed(rows, p.columns())
		}
		tableAge := time.Duration(p.age.Float64 * float64(time.Second))
		seen := seenOf(p.seenAge, p.withdrawn.Int64 > 0)
		switch {
		case err != nil:
			return Pick{}, fmt.Errorf("next binding for instance %q: %w", req.InstanceID, err)
		case p.binding.Valid:
			return seen(Pick{Binding: p.binding.String, TableAge: tableAge}), nil
		case p.void:
			if err := c.releaseVoid(ctx, req); err != nil {
				return Pick{}, err
			}
			continue
		case !p.age.Valid:
			return Pick{}, fmt.Errorf("next binding for instance %q: the job has not computed the table yet: %w", req.InstanceID, ErrStale)
		case tableAge > maxAge:
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q: table computed %s ago, more than %s: %w",
				req.InstanceID, tableAge.Round(time.Second), maxAge, ErrStale)
		case reserveWithin.Valid && !(p.seenAge.Valid && p.seenAge.Float64 <= reserveWithin.Float64):
			return seen(Pick{TableAge: tableAge}), fmt.Errorf("next binding for instance %q: %w", req.InstanceID, ErrUnconfirmed)
		case req.shared() && !p.picked:
			return Pick{TableAge: tableAge}, fmt.Errorf("next binding for instance %q, pool %s (euAccess %t): %w",
				req.InstanceID, req.HyperscalerType, req.EUAccess, ErrSharedPoolEmpty)
		case p.guarded.Bool:
			return seen(Pick{Held: names(p.held), TableAge: tableAge}), fmt.Errorf("next binding for instance %q, global account %q, pool %s (euAccess %t): %w",
				req.InstanceID, req.GlobalAccountID, req.HyperscalerType, req.EUAccess, ErrGuarded)
		case !p.picked:
			return seen(Pick{ClaimNew: true, Held: names(p.held), TableAge: tableAge}), nil
		}
		// picked but not reserved: a concurrent call for the instance won.
	}
	return Pick{}, fmt.Errorf("next binding for instance %q: a concurrent call for the same instance kept winning", req.InstanceID)
}

// SeenAgo is how long before the pick the table had last seen every change
// of Gardener's bindings; false when it never had (a CronJob's table, or a
// job too old to mark it).
func (p Pick) SeenAgo() (time.Duration, bool) { return p.seen, p.seenKnown }

// seenOf returns what fills a Pick with the statement's seen_age and
// whether the GA's group has withdrawn rows.
func seenOf(age sql.NullFloat64, hidden bool) func(Pick) Pick {
	return func(p Pick) Pick {
		p.seen, p.seenKnown, p.hidden = time.Duration(age.Float64*float64(time.Second)), age.Valid, hidden
		return p
	}
}

// names splits the statement's comma-joined binding names (Gardener's
// names never hold a comma).
func names(joined sql.NullString) []string {
	if !joined.Valid || joined.String == "" {
		return nil
	}
	return strings.Split(joined.String, ",")
}

// scanNamed reads the one row rows holds into dest, by column name: a
// column the statement renames, adds or drops is an error, never a value in
// the wrong variable.
func scanNamed(rows *sql.Rows, dest map[string]any) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if len(cols) != len(dest) {
		return fmt.Errorf("the statement answers columns %v, want %d", cols, len(dest))
	}
	ptrs := make([]any, len(cols))
	for i, c := range cols {
		p, ok := dest[c]
		if !ok {
			return fmt.Errorf("the statement answers column %q, which nothing reads", c)
		}
		ptrs[i] = p
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(ptrs...); err != nil {
		return err
	}
	return rows.Close()
}

// releaseVoid drops the instance's reservation on a binding since withdrawn
// or handed to another GA, so that the next ask picks anew.
func (c *Client) releaseVoid(ctx context.Context, req Request) error {
	rows, err := c.query(ctx, fmt.Sprintf(releaseVoidTemplate, schema.OrDefault(c.Schema)), req.InstanceID)
	if err == nil {
		err = drain(rows)
	}
	if err != nil {
		return fmt.Errorf("next binding for instance %q: drop its reservation on a withdrawn binding: %w", req.InstanceID, err)
	}
	return nil
}

// drain reads rows to their end, so that the statement behind them has
// run whole, and says whether it failed.
func drain(rows *sql.Rows) error {
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}
