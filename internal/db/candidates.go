package db

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// CandidateValues are what the job decides of a candidate row: the table
// and its history (candidate_history) both hold them.
type CandidateValues struct {
	BindingName     string `gorm:"column:binding_name"`
	GlobalAccountID string `gorm:"column:global_account_id"`
	HyperscalerType string `gorm:"column:hyperscaler_type"`
	EUAccess        bool   `gorm:"column:eu_access"`
	DBCount         int    `gorm:"column:db_count"`
	ShootCount      int    `gorm:"column:shoot_count"`
	EffectiveCount  int    `gorm:"column:effective_count"`
	ClusterLimit    *int   `gorm:"column:cluster_limit"`
	Selectable      bool   `gorm:"column:selectable"`
	Guarded         bool   `gorm:"column:guarded"`
	Rank            int    `gorm:"column:rank"`
}

type candidateRow struct {
	CandidateValues `gorm:"embedded"`
	Headroom        *int      `gorm:"column:headroom"`
	Reserved        int       `gorm:"column:reserved"` // the reservations held on it, as candidates_of.sql counts them
	ComputedAt      time.Time `gorm:"column:computed_at"`
}

// ReplaceCandidates brings the candidate table to rows, computed from a
// snapshot whose reservations absorbed lists (see ReadInstanceCounts).
//
// Provisioning reads and updates this table at any time, so the rewrite
// takes no table lock: in one transaction it touches only the rows that
// change, and a pick waits only when it wants one of those rows, for as long
// as the transaction lasts. Readers keep seeing the old table until the
// commit, then the new one: never a half-written one.
//
// Reservations stay counted exactly once. The rewrite drops the reservations
// the snapshot absorbed (its database read counts their instances) and those
// older than reservationTTL (an instance KEB never wrote); a reservation is
// its row, which the pick counts, so one made at any moment before, during
// or after the rewrite is neither lost nor counted twice. The rewrite never
// writes picks, the pick's counter: when a pick and the rewrite meet on one
// row, the second waits for the first and PostgreSQL re-checks the pick's
// limit on the row's newest version.
//
// A pick counts KEB's instances itself, at the moment KEB asks; the table
// holds what the snapshot alone can say (the shoots, the limits, the
// order). A claim KEB recorded after the snapshot was taken keeps the row
// RecordClaim wrote (unsettledClaims), and so does one recorded after the
// rewrite read the table: it changes only rows still as it read them
// (applyCandidateChanges).
//
// Rewrites exclude each other (an advisory lock), so two never lock rows in
// opposite orders. Against KEB's calls the rewrite locks in their order, so
// that neither waits for the other while holding a row the other wants: a
// pick locks the candidate row it chooses, then inserts its reservation;
// RecordClaim inserts its reservation, locks (or inserts) the binding's
// candidate row, then drops other GAs' reservations on the binding and
// writes recorded_claims. So the rewrite changes the candidate rows first
// and only then drops reservations and ends settled claims: done first, they
// would hold what a RecordClaim of the same binding wants next while it
// waits for the row the RecordClaim holds (40P01). The diff reads
// the claims beforehand, locking nothing (unsettledClaims). A rewrite's
// delete never waits for a reservation a pick or claim is inserting: it sees
// committed rows only. Within the candidate table a pick's order is KEB's
// counts of the moment, which no rewrite can follow: a pick and a rewrite
// may still meet there in opposite order, and a rewrite PostgreSQL ends to
// break it is run again (rewriteAttempts).
//
// A rewrite lowers the stamp of how far the table has seen Gardener to its
// snapshot's time when the stamp is later: it cannot vouch for more
// (StampGardenerSeen).
func (s *Store) ReplaceCandidates(ctx context.Context, rows []hap.Candidate, absorbed []string, computedAt time.Time, reservationTTL time.Duration) error {
	if reservationTTL <= 0 {
		return fmt.Errorf("reservation TTL %s: must be positive", reservationTTL)
	}
	want, err := indexCandidates(rows)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err = s.rewriteCandidates(ctx, rows, want, absorbed, computedAt, reservationTTL)
		if attempt == rewriteAttempts || !deadlocked(err) {
			return s.wrap("replace candidates", err)
		}
	}
}

// rewriteAttempts bounds how often ReplaceCandidates runs its transaction
// when PostgreSQL ends it to break a deadlock with a pick. A pick's FOR
// UPDATE keeps the lock on a row that failed its limit's re-check (a
// concurrent pick just filled it) and goes on to the next row in its order,
// which follows KEB's counts at that moment: no order of the rewrite's own
// can match it, so a rewrite changing both rows may meet such a pick in
// opposite order. The pick is one short statement; once the rewrite is
// ended it commits, and the rewrite, repeated from the same snapshot, goes
// through.
const rewriteAttempts = 3

// deadlocked reports whether PostgreSQL ended the transaction to break a
// deadlock (SQLSTATE 40P01).
func deadlocked(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}

// rewriteCandidates is one attempt of ReplaceCandidates: its transaction.
func (s *Store) rewriteCandidates(ctx context.Context, rows []hap.Candidate, want map[string]int, absorbed []string, computedAt time.Time, reservationTTL time.Duration) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(s.sql(advisoryXactLock), params{"key": s.advisoryKey("candidates-rewrite")}).Error; err != nil {
			return fmt.Errorf("wait for other rewrites: %w", err)
		}
		claims, err := s.unsettledClaims(tx, computedAt)
		if err != nil {
			return err
		}
		diff := newCandidateDiff(rows, want, computedAt)
		diff.claims = claims
		if err := s.eachCandidateRow(tx, diff.compare); err != nil {
			return err
		}
		changes := diff.changes()
		// History first: it locks no candidate row, so picks never wait
		// for it. What a claim since the read kept from the rewrite is
		// taken back after (applyCandidateChanges).
		if err := s.recordCandidateHistory(tx, changes, computedAt); err != nil {
			return err
		}
		skipped, err := s.applyCandidateChanges(tx, changes)
		if err != nil {
			return err
		}
		if err := s.takeBackHistory(tx, skipped); err != nil {
			return err
		}
		// The side tables after the rows, in RecordClaim's order (see
		// above).
		if err := s.dropReservations(tx, absorbed, reservationTTL); err != nil {
			return err
		}
		if err := s.endSettledClaims(tx, computedAt); err != nil {
			return err
		}
		return tx.Exec(s.sql(candidatesComputedSet), params{"computed_at": computedAt}).Error
	})
}

var (
	//go:embed sql/advisory_xact_lock.sql
	advisoryXactLock string
	//go:embed sql/reservations_drop_absorbed.sql
	reservationsDropAbsorbed string
	//go:embed sql/reservations_drop_expired.sql
	reservationsDropExpired string
	//go:embed sql/candidates_all.sql
	candidatesAll string
	//go:embed sql/candidates_remove.sql
	candidatesRemove string
	//go:embed sql/candidates_update.sql
	candidatesUpdate string
	//go:embed sql/candidates_insert.sql
	candidatesInsert string
	//go:embed sql/candidates_computed_set.sql
	candidatesComputedSet string
	//go:embed sql/candidates_of.sql
	candidatesOf string
	//go:embed sql/candidates_computed_at.sql
	candidatesComputedAt string
)

// dropReservations drops the reservations the snapshot absorbed and those
// older than ttl (an instance KEB never wrote).
func (s *Store) dropReservations(tx *gorm.DB, absorbed []string, ttl time.Duration) error {
	if err := tx.Exec(s.sql(reservationsDropAbsorbed), params{"instances": jsonList(absorbed)}).Error; err != nil {
		return fmt.Errorf("drop absorbed reservations: %w", err)
	}
	if err := tx.Exec(s.sql(reservationsDropExpired), params{"ttl": ttl.Seconds()}).Error; err != nil {
		return fmt.Errorf("drop expired reservations: %w", err)
	}
	return nil
}

// candidateChanges is what a rewrite does to the table.
type candidateChanges struct {
	insert []candidateRow
	// update rows hold the new values of rows whose values changed;
	// updateRead, in the same order, whose those rows were when read.
	update     []candidateRow
	updateRead []candidateTenant
	// remove are the rows removed, whose they were when read.
	remove []candidateTenant
}

// candidateTenant is whose a candidate row is: its GA and pool. The
// rewrite changes a row only while it is still whose it was when read
// (applyCandidateChanges).
type candidateTenant struct {
	BindingName     string `gorm:"column:binding_name"`
	GlobalAccountID string `gorm:"column:global_account_id"`
	HyperscalerType string `gorm:"column:hyperscaler_type"`
	EUAccess        bool   `gorm:"column:eu_access"`
}

func tenantOf(r candidateRow) candidateTenant {
	return candidateTenant{BindingName: r.BindingName, GlobalAccountID: r.GlobalAccountID, HyperscalerType: r.HyperscalerType, EUAccess: r.EUAccess}
}

// bindings are the names of rows.
func bindings(rows []candidateTenant) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.BindingName
	}
	return out
}

// candidateDiff compares the table, row by row as it is read, with the rows
// it must hold, so a rewrite never holds the table twice: only the index of
// the rows wanted and the rows that change. A row is updated when one of its
// values changed; a row whose binding is gone is removed; a wanted row the
// table lacks is inserted.
type candidateDiff struct {
	// claims are the claims KEB recorded that the snapshot may not show,
	// by binding: their rows stay as RecordClaim wrote them unless the
	// snapshot gives the binding to the same GA and pool.
	claims     map[string]recordedClaim
	want       []hap.Candidate
	index      map[string]int
	inTable    []bool
	computedAt time.Time
	ch         candidateChanges
}

func newCandidateDiff(want []hap.Candidate, index map[string]int, computedAt time.Time) *candidateDiff {
	return &candidateDiff{want: want, index: index, inTable: make([]bool, len(want)), computedAt: computedAt}
}

// compare takes one row of the table.
func (d *candidateDiff) compare(current candidateRow) {
	i, ok := d.index[current.BindingName]
	if claim, recorded := d.claims[current.BindingName]; recorded && claim.holds(current) && (!ok || !claim.sameGroup(d.want[i])) {
		if ok {
			d.inTable[i] = true // neither replaced nor inserted
		}
		return
	}
	if !ok {
		d.ch.remove = append(d.ch.remove, tenantOf(current))
		return
	}
	d.inTable[i] = true
	if w := candidateRowOf(d.want[i], d.computedAt); !sameCandidate(current, w) {
		d.ch.update = append(d.ch.update, w)
		d.ch.updateRead = append(d.ch.updateRead, tenantOf(current))
	}
}

// changes is what the rewrite must do once every row of the table was
// compared.
func (d *candidateDiff) changes() candidateChanges {
	for i, seen := range d.inTable {
		if !seen {
			d.ch.insert = append(d.ch.insert, candidateRowOf(d.want[i], d.computedAt))
		}
	}
	slices.SortFunc(d.ch.remove, func(a, b candidateTenant) int { return strings.Compare(a.BindingName, b.BindingName) })
	return d.ch
}

// eachCandidateRow streams the candidate table to fn.
func (s *Store) eachCandidateRow(tx *gorm.DB, fn func(candidateRow)) error {
	err := streamRows(tx, s.sql(candidatesAll), nil, func(r candidateRow) error {
		fn(r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read candidates: %w", err)
	}
	return nil
}

// sameCandidate compares what the job computes; computed_at belongs to the
// run. The values are compared as one struct, but for the limit, which is
// compared by what it points to.
func sameCandidate(a, b candidateRow) bool {
	av, bv := a.CandidateValues, b.CandidateValues
	sameLimit := sameInt(av.ClusterLimit, bv.ClusterLimit)
	av.ClusterLimit, bv.ClusterLimit = nil, nil
	return av == bv && sameLimit && sameInt(a.Headroom, b.Headroom) && a.Reserved == b.Reserved
}

// sameInt reports whether x and y are both nil or point to equal values.
func sameInt(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }

// applyCandidateChanges removes, updates and inserts rows, one statement
// each: a row a pick wants is held only while the rewrite's transaction
// lasts, so that must be short. Rewrites exclude each other; a pick may
// hold a row it passed over while it waits for the next, which
// ReplaceCandidates answers by running again (rewriteAttempts).
//
// RecordClaim may have written a row since the rewrite read the table: given
// a stale row to its GA, or listed a binding the table lacked. The rewrite's
// snapshot predates that claim, so its values must not replace the claim's:
// a row is removed or updated only while it still has the GA and pool it
// had when read (PostgreSQL re-checks that on the row's newest version when
// the statement waited for RecordClaim's lock), and a row inserted
// meanwhile is left as it is. It returns the bindings so left; the next
// rewrite, whose read then sees the recorded claim, brings them to its
// snapshot.
func (s *Store) applyCandidateChanges(tx *gorm.DB, ch candidateChanges) (skipped []string, err error) {
	var done []string
	if len(ch.remove) > 0 {
		read, err := rowsJSON(ch.remove)
		if err != nil {
			return nil, err
		}
		if done, err = s.changeCandidates(tx, candidatesRemove, params{"rows": read}, done); err != nil {
			return nil, fmt.Errorf("remove %d candidates: %w", len(ch.remove), err)
		}
	}
	if len(ch.update) > 0 {
		rows, err := rowsJSON(ch.update)
		if err != nil {
			return nil, err
		}
		read, err := rowsJSON(ch.updateRead)
		if err != nil {
			return nil, err
		}
		if done, err = s.changeCandidates(tx, candidatesUpdate, params{"rows": rows, "read": read}, done); err != nil {
			return nil, fmt.Errorf("update %d candidates: %w", len(ch.update), err)
		}
	}
	if len(ch.insert) > 0 {
		rows, err := rowsJSON(ch.insert)
		if err != nil {
			return nil, err
		}
		if done, err = s.changeCandidates(tx, candidatesInsert, params{"rows": rows}, done); err != nil {
			return nil, fmt.Errorf("insert %d candidates: %w", len(ch.insert), err)
		}
	}
	return notDone(ch, done), nil
}

// changeCandidates runs statement, which returns the bindings it changed,
// and appends them to done.
func (s *Store) changeCandidates(tx *gorm.DB, statement string, p params, done []string) ([]string, error) {
	var changed []string
	if err := tx.Raw(s.sql(statement), p).Scan(&changed).Error; err != nil {
		return done, err
	}
	return append(done, changed...), nil
}

// notDone lists the bindings ch meant to change that are not in done.
func notDone(ch candidateChanges, done []string) []string {
	planned := slices.Concat(bindings(ch.remove), bindings(ch.updateRead))
	for _, r := range ch.insert {
		planned = append(planned, r.BindingName)
	}
	changed := make(map[string]bool, len(done))
	for _, b := range done {
		changed[b] = true
	}
	var left []string
	for _, b := range planned {
		if !changed[b] {
			left = append(left, b)
		}
	}
	return left
}

// indexCandidates maps each binding to its row, refusing rows the pick
// could misread: no binding, no pool, or one binding twice.
func indexCandidates(rows []hap.Candidate) (map[string]int, error) {
	index := make(map[string]int, len(rows))
	for i, c := range rows {
		if c.BindingName == "" {
			return nil, fmt.Errorf("candidate %d: binding name is empty", i)
		}
		if c.Pool.HyperscalerType == "" {
			return nil, fmt.Errorf("candidate %d (binding %q): hyperscaler type is empty", i, c.BindingName)
		}
		if _, twice := index[c.BindingName]; twice {
			return nil, fmt.Errorf("candidate %d: binding %q appears twice", i, c.BindingName)
		}
		index[c.BindingName] = i
	}
	return index, nil
}

func candidateRowOf(c hap.Candidate, computedAt time.Time) candidateRow {
	return candidateRow{
		CandidateValues: CandidateValues{
			BindingName:     c.BindingName,
			GlobalAccountID: c.GlobalAccountID,
			HyperscalerType: c.Pool.HyperscalerType,
			EUAccess:        c.Pool.EUAccess,
			DBCount:         c.DBCount,
			ShootCount:      c.ShootCount,
			EffectiveCount:  c.EffectiveCount,
			ClusterLimit:    c.Limit,
			Selectable:      c.Selectable,
			Guarded:         c.Guarded,
			Rank:            c.Rank,
		},
		Headroom:   c.Headroom,
		ComputedAt: computedAt,
	}
}

// Candidates lists the candidate rows of ga ("" is the shared pools), or of
// every GA with hap.AllGlobalAccounts, in pick order within each pool.
func (s *Store) Candidates(ctx context.Context, ga string) (_ []hap.StoredCandidate, err error) {
	defer func() { err = explain(err, s.schema) }()
	var rows []candidateRow
	db := s.db.WithContext(ctx)
	if err := db.Raw(s.sql(candidatesOf), params{"all": ga == hap.AllGlobalAccounts, "ga": ga}).Scan(&rows).Error; err != nil {
		return nil, s.wrap("read candidates", err)
	}
	var computedAt time.Time
	if err := db.Raw(s.sql(candidatesComputedAt)).Scan(&computedAt).Error; err != nil {
		return nil, s.wrap("read when the candidates were computed", err)
	}
	out := make([]hap.StoredCandidate, 0, len(rows))
	for _, r := range rows {
		c := r.candidate()
		c.Headroom = r.Headroom
		out = append(out, hap.StoredCandidate{Candidate: c, Reserved: r.Reserved, ComputedAt: computedAt})
	}
	return out, nil
}

// candidate is the decision's view of the values; the headroom is the
// table's alone.
func (v CandidateValues) candidate() hap.Candidate {
	return hap.Candidate{
		GlobalAccountID: v.GlobalAccountID,
		Pool:            hap.Pool{HyperscalerType: v.HyperscalerType, EUAccess: v.EUAccess},
		BindingName:     v.BindingName,
		DBCount:         v.DBCount,
		ShootCount:      v.ShootCount,
		EffectiveCount:  v.EffectiveCount,
		Limit:           v.ClusterLimit,
		Selectable:      v.Selectable,
		Guarded:         v.Guarded,
		Rank:            v.Rank,
	}
}
