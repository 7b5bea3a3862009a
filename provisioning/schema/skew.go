package schema

import (
	"errors"
	"fmt"
)

// The versions of the job's schema this release of the module reads
// (docs/deployment.md#the-skew-between-kebs-module-and-the-jobs-schema).
// Oldest is the oldest whose tables and columns every statement of the read path
// uses: 11, for candidates_computed.gardener_seen_at. Newest is the
// schema this release was built with and the one after: the job's next
// migration only adds, never drops or changes what this module reads, so
// the job may be upgraded before KEB raises its pin.
const (
	Oldest = 11
	Newest = 12
)

// ErrSkew means the job's schema is at a version outside a Range; the
// provisioning package answers it as ErrSchemaSkew.
var ErrSkew = errors.New("the job's schema is at a version this module does not read")

// Range is the versions of the job's schema a release of the module
// reads, both included.
type Range struct{ Oldest, Newest int }

// ModuleReads is the range of this release of the module.
func ModuleReads() Range { return Range{Oldest: Oldest, Newest: Newest} }

func (r Range) String() string { return fmt.Sprintf("%d to %d", r.Oldest, r.Newest) }

// Check answers nil when a schema golang-migrate records at version, dirty
// or not, is one r reads, and otherwise an error wrapping ErrSkew
// that names both. A dirty version failed part-way; its migration is one
// transaction, so the schema stands as the version before left it (and
// stands so while a migration runs).
func (r Range) Check(version int, dirty bool) error {
	stands := version
	if dirty {
		stands--
	}
	if stands >= r.Oldest && stands <= r.Newest {
		return nil
	}
	at := fmt.Sprintf("version %d", version)
	switch {
	case version <= 0:
		at = "no version"
	case dirty:
		at = fmt.Sprintf("version %d, marked dirty (it stands as version %d left it)", version, stands)
	}
	return fmt.Errorf("%w: the module reads versions %s and the job's schema records %s", ErrSkew, r, at)
}
