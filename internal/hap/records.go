package hap

import "time"

// The records below are what the jobs, the report and the job's store
// exchange: the store's port (jobs.Store, report.Store) speaks in them, and
// db reads and writes them under these names, no alias in between. Only the
// rows of each table (db's unexported *Row types) are db's own.

// AllGlobalAccounts selects every GA in store queries, where "" already
// means the shared pools.
const AllGlobalAccounts = "*"

// InstanceRead is one consistent read of KEB's database.
type InstanceRead struct {
	Counts []InstanceCount
	// TakenAt is the database's now() of the reading transaction.
	TakenAt time.Time
	// Absorbed are the instance ids of reservations whose instance the
	// counts already include: they must not be counted a second time.
	Absorbed []string
}

// OpenFinding is a drift finding as stored: not resolved yet, with when runs
// first and last produced it.
type OpenFinding struct {
	Finding
	FirstSeen time.Time
	LastSeen  time.Time
}

// DriftChanges is what one drift run changed in the record of findings.
type DriftChanges struct {
	// Opened are the findings no run had open before this one.
	Opened []Finding
	// Resolved are the findings open before this run that it did not
	// produce, as the last run that did saw them.
	Resolved []OpenFinding
}

// StoredCandidate is a row of the candidate table as stored.
type StoredCandidate struct {
	Candidate
	// Reserved counts the picks made since the table was computed whose
	// instances KEB's table did not show yet.
	Reserved   int
	ComputedAt time.Time
}

// Outcomes of a release decision, as the release audit records them.
const (
	OutcomeReleased     = "released"
	OutcomeWouldRelease = "would_release" // a dry run's decision
	OutcomeConflict     = "conflict"      // the binding changed under the update
	OutcomeAborted      = "aborted"       // the update or the fresh look failed
	// OutcomeUndone records an operator's undo-release of a release that
	// landed: the dirty label removed, tenantName kept. Its reason names the
	// release (its intent) it undid.
	OutcomeUndone = "undone"
	// OutcomeIntent is written right before the label update; a later row
	// of the binding settles it (see jobs' release intents).
	OutcomeIntent = "intent"
)

// ReleaseRecord is one release decision and what came of it.
type ReleaseRecord struct {
	// ID is the row's number in the history, given when it is written.
	ID              int64
	BindingName     string
	GlobalAccountID string
	Pool            Pool
	Mode            string
	Reason          string
	DryRun          bool
	Outcome         string
	// IntentID names the intent row an outcome row settles; 0 for rows no
	// intent precedes (dry runs, a release given up before its intent).
	IntentID int64
	// ResourceVersion is, on an intent row, the version of the binding the
	// label update is guarded by.
	ResourceVersion string
	// At is the database's time when the row was written: the job's clock
	// never stamps the history, so it orders against KEB's own rows.
	At time.Time
}

// OpenIntent is an intent row no outcome row settles yet, with its age on
// the database's clock.
type OpenIntent struct {
	ReleaseRecord
	Age time.Duration
}
