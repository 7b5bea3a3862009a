package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Layout is how a table is printed: -o wide adds the columns marked wide,
// --no-headers leaves out the header line and every line that is no row
// (titles, notes, summaries), so that the output is rows only for awk and
// sort. JSON and YAML carry everything either way.
type Layout struct {
	Wide      bool
	NoHeaders bool
}

// column is one column of a table; a wide one is printed with -o wide only.
type column struct {
	header string
	wide   bool
}

// table writes aligned rows, the columns the layout keeps.
type table struct {
	tw   *tabwriter.Writer
	keep []bool
}

func newTable(out io.Writer, l Layout, cols ...column) *table {
	t := &table{tw: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0), keep: make([]bool, len(cols))}
	headers := make([]string, len(cols))
	for i, c := range cols {
		t.keep[i] = !c.wide || l.Wide
		headers[i] = c.header
	}
	if !l.NoHeaders {
		t.row(headers...)
	}
	return t
}

// row writes one row; cells are given for every column, the wide ones too.
func (t *table) row(cells ...string) {
	if len(cells) != len(t.keep) {
		panic(fmt.Sprintf("report: a row of %d cells in a table of %d columns", len(cells), len(t.keep)))
	}
	kept := make([]string, 0, len(cells))
	for i, c := range cells {
		if t.keep[i] {
			kept = append(kept, c)
		}
	}
	fmt.Fprintln(t.tw, strings.Join(kept, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// note writes a line that is no row: left out with --no-headers.
func (l Layout) note(out io.Writer, format string, args ...any) {
	if !l.NoHeaders {
		fmt.Fprintf(out, format, args...)
	}
}
