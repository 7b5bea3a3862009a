package soak

import "strings"

// The series a soak samples. The process's own come from its /metrics (the
// Go and process collectors); the connections from pg_stat_activity; a
// table's rows, TableRowsPrefix and the table's name, from the same count
// the retention step exports as hap_reconciler_table_rows.
const (
	RSSBytes        = "process_resident_memory_bytes"
	HeapAllocBytes  = "go_memstats_heap_alloc_bytes"
	Goroutines      = "go_goroutines"
	OpenFDs         = "process_open_fds"
	DBConnections   = "db_connections"
	TableRowsPrefix = "rows:"
)

// ProcessSeries are the series read from the job's /metrics.
var ProcessSeries = []string{RSSBytes, HeapAllocBytes, Goroutines, OpenFDs}

// MiB is a mebibyte, for the memory bounds.
const MiB = 1 << 20

// BoundOf is the bound each series is judged flat against: its fitted line
// may move by at most a tenth of its mean over the run, or by an absolute
// amount that covers the noise of a small series (docs/benchmarks.md,
// "Running for months: the soak"). Memory moves with the garbage
// collector's cycle by a few MiB; goroutines and open files with the
// requests in flight at the moment of a sample; connections with the
// pool's idle ones; a table's rows with the runs between two prunes.
func BoundOf(series string) Bound {
	switch {
	case series == RSSBytes || series == HeapAllocBytes:
		return Bound{Relative: 0.1, Absolute: 8 * MiB}
	case series == Goroutines || series == OpenFDs:
		return Bound{Relative: 0.1, Absolute: 10}
	case series == DBConnections:
		return Bound{Relative: 0.1, Absolute: 3}
	case strings.HasPrefix(series, TableRowsPrefix):
		return Bound{Relative: 0.1, Absolute: 20}
	}
	return Bound{Relative: 0.1}
}
