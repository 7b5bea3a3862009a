package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// errMD5InFIPSMode is a login PostgreSQL wanted to do with MD5 password
// authentication while the job runs FIPS-only (the image's
// GODEBUG=fips140=only): MD5 is not an approved algorithm, and Go's
// crypto/md5 panics when pgx computes the response.
var errMD5InFIPSMode = errors.New("PostgreSQL asks the job's role for MD5 password authentication, which FIPS-only mode " +
	"(GODEBUG=fips140=only) does not allow: store the role's password as SCRAM-SHA-256 (password_encryption = " +
	"'scram-sha-256', then ALTER ROLE ... PASSWORD) and let pg_hba.conf use scram-sha-256 for it")

// openDB is stdlib.OpenDB, with a login that needs MD5 in FIPS-only mode
// failing as errMD5InFIPSMode instead of crashing the process: the panic is
// raised where pgx answers the server's MD5 challenge, which database/sql
// may do in a goroutine of its own.
func openDB(cfg pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(md5RefusingConnector{stdlib.GetConnector(cfg)})
}

type md5RefusingConnector struct{ driver.Connector }

func (c md5RefusingConnector) Connect(ctx context.Context) (conn driver.Conn, err error) {
	defer func() {
		if r := recover(); r != nil {
			if !strings.Contains(fmt.Sprint(r), "MD5 is not allowed in FIPS 140-only mode") {
				panic(r)
			}
			conn, err = nil, errMD5InFIPSMode
		}
	}()
	return c.Connector.Connect(ctx)
}
