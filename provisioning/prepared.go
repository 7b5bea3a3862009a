package provisioning

import (
	"context"
	"database/sql"
	"sync"
)

// preparedPicks holds the pick's statement prepared once per pool and text
// (preparedKey): the text depends only on the schema and MaxAge, so a
// caller holds one or two.
var preparedPicks sync.Map

type preparedKey struct {
	pool  *sql.DB
	query string
}

// queryRowPrepared runs query on db, prepared once when db is a pool
// (*sql.DB). KEB's driver, lib/pq, otherwise sends every statement unnamed,
// which PostgreSQL parses and plans on every pick, and planning was most of
// a pick. A named statement can keep its plan per connection: after five
// custom plans PostgreSQL keeps the generic one when its estimate is no
// worse, which the estimable bounds allow (see nextBindingTemplate); when
// it is worse, each pick is still planned but no longer parsed.
// database/sql prepares the statement again on each connection it runs on.
// A connection or transaction (*sql.Conn, *sql.Tx) runs the statement as it
// is, and so does a pool when preparing fails.
func queryRowPrepared(ctx context.Context, db Querier, query string, args ...any) *sql.Row {
	pool, ok := db.(*sql.DB)
	if !ok {
		return db.QueryRowContext(ctx, query, args...)
	}
	key := preparedKey{pool: pool, query: query}
	if stmt, ok := preparedPicks.Load(key); ok {
		return stmt.(*sql.Stmt).QueryRowContext(ctx, args...)
	}
	stmt, err := pool.PrepareContext(ctx, query)
	if err != nil {
		// The statement unprepared says what went wrong, as before.
		return pool.QueryRowContext(ctx, query, args...)
	}
	if held, loaded := preparedPicks.LoadOrStore(key, stmt); loaded {
		_ = stmt.Close()
		stmt = held.(*sql.Stmt)
	}
	return stmt.QueryRowContext(ctx, args...)
}
