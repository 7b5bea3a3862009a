package db

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"
)

// The data layer speaks one idiom: every statement is SQL, in a file of its
// own under sql/, embedded beside the Go that runs it
// (//go:embed sql/<name>.sql), so go build fails when one is missing, and a
// reader reads, diffs and EXPLAINs a statement as PostgreSQL receives it.
// gorm carries them: the pool, transactions, named parameters (@name) and
// rows scanned into structs by column name. A table's columns are named
// once in Go, in its row struct's tags.
//
// Rows written in bulk travel as one JSON parameter (rowsJSON) that the
// statement reads with jsonb_populate_recordset into the table's own row
// type: no column list or cast restated in Go, and no limit on parameters
// per batch.
//
// In a statement, {{schema}} is the job's schema (validated as a plain
// identifier when the Store opened). Comment lines (--) are dropped before
// the statement is sent. Outside them a statement holds no "?" (gorm would
// read it as a positional parameter) and no "::" right after a parameter
// (gorm would read it as part of the name): cast with (@name)::type. Lists
// of names go as one JSON array (jsonList).
// TestEveryStatementFileIsEmbeddedAndWellFormed holds the files to this.

// params are a statement's named parameters.
type params = map[string]any

// sql renders statement for the Store's schema, without its comment lines:
// they are for the reader, and may name parameters that must not be
// filled. fills are further pairs of a placeholder and its text, such as
// KEB's ownership rule, which the provisioning module writes once for the
// job and KEB alike.
func (s *Store) sql(statement string, fills ...string) string {
	lines := strings.Split(statement, "\n")
	kept := lines[:0]
	for _, line := range lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			kept = append(kept, line)
		}
	}
	return strings.NewReplacer(append([]string{"{{schema}}", s.schema}, fills...)...).Replace(strings.Join(kept, "\n"))
}

// jsonList renders items (names, ids) as a JSON array: one parameter
// however many.
func jsonList[T string | int64](items []T) string {
	if items == nil {
		items = []T{}
	}
	out, _ := json.Marshal(items) // strings and integers always marshal
	return string(out)
}

// rowSchemas caches the column names gorm reads from each row struct.
var rowSchemas sync.Map

// rowsJSON renders rows as a JSON array of objects keyed by the columns the
// row struct's gorm tags name. Times go at the database's precision,
// microseconds, cut as the driver cuts them.
func rowsJSON[T any](rows []T) (string, error) {
	sch, err := schema.Parse(new(T), &rowSchemas, schema.NamingStrategy{})
	if err != nil {
		return "", fmt.Errorf("row type %T: %w", *new(T), err)
	}
	objects := make([]map[string]any, len(rows))
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		o := make(map[string]any, len(sch.DBNames))
		for _, f := range sch.Fields {
			if f.DBName == "" {
				continue
			}
			value, _ := f.ValueOf(context.Background(), v)
			o[f.DBName] = atDatabasePrecision(value)
		}
		objects[i] = o
	}
	out, err := json.Marshal(objects)
	return string(out), err
}

func atDatabasePrecision(v any) any {
	switch t := v.(type) {
	case time.Time:
		return t.Truncate(time.Microsecond)
	case *time.Time:
		if t == nil {
			return nil
		}
		return t.Truncate(time.Microsecond)
	}
	return v
}

// streamRows runs statement and hands each row to fn as a T, its columns
// matched by name with T's gorm tags once for the whole result rather than
// on every row (gorm's ScanRows matches them anew for each): the candidate
// table and KEB's instance counts stream tens of thousands of rows. A
// column T does not name is read and dropped.
func streamRows[T any](tx *gorm.DB, statement string, args []any, fn func(T) error) error {
	sch, err := schema.Parse(new(T), &rowSchemas, schema.NamingStrategy{})
	if err != nil {
		return fmt.Errorf("row type %T: %w", *new(T), err)
	}
	rows, err := tx.Raw(statement, args...).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return err
	}
	var row T
	into := reflect.ValueOf(&row).Elem()
	targets := make([]any, len(columns))
	for i, column := range columns {
		if f, ok := sch.FieldsByDBName[column]; ok {
			targets[i] = f.ReflectValueOf(context.Background(), into).Addr().Interface()
		} else {
			targets[i] = new(any)
		}
	}
	for rows.Next() {
		// Scan sets every named field of row anew, pointers included, so
		// the copy handed to fn shares nothing with the next row.
		if err := rows.Scan(targets...); err != nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return rows.Err()
}
