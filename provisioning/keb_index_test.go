package provisioning

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"
)

// countingDB answers every query with err and counts the queries.
type countingDB struct {
	queries int
	err     error
}

func (d *countingDB) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	d.queries++
	return nil, d.err
}

// What a client found of KEB's index is kept for kebIndexRecheck, a
// failed look is not, and nothing is kept past the interval.
func TestTheKEBIndexIsLookedForOncePerInterval(t *testing.T) {
	down := errors.New("connection refused")
	db := &countingDB{err: down}
	c := &Client{DB: db}
	ctx := context.Background()

	for range 2 {
		if err := c.checkKEBIndex(ctx); !errors.Is(err, down) {
			t.Fatalf("catalog unreachable: %v, want %v", err, down)
		}
	}
	if db.queries != 2 {
		t.Fatalf("a failed look was kept: %d queries for 2 checks, want 2", db.queries)
	}

	db.queries = 0
	c.kebIndex.last.Store(&look{at: time.Now()})
	for range 100 {
		if err := c.checkKEBIndex(ctx); err != nil {
			t.Fatalf("index seen valid just now: %v", err)
		}
	}
	missing := &look{at: time.Now(), found: ErrNoKEBIndex}
	c.kebIndex.last.Store(missing)
	if err := c.checkKEBIndex(ctx); !errors.Is(err, ErrNoKEBIndex) {
		t.Fatalf("index seen missing just now: %v, want ErrNoKEBIndex", err)
	}
	if db.queries != 0 {
		t.Fatalf("%d catalog queries within the interval, want none", db.queries)
	}

	missing.at = time.Now().Add(-kebIndexRecheck)
	if err := c.checkKEBIndex(ctx); !errors.Is(err, down) || db.queries != 1 {
		t.Fatalf("after the interval: %v with %d queries, want one look (%v)", err, db.queries, down)
	}
}

// BenchmarkKEBIndexCheckWithinTheInterval is what the check adds to a pick
// between two looks at the catalog.
func BenchmarkKEBIndexCheckWithinTheInterval(b *testing.B) {
	c := &Client{DB: &countingDB{}}
	c.kebIndex.last.Store(&look{at: time.Now()})
	ctx := context.Background()
	for b.Loop() {
		if err := c.checkKEBIndex(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
