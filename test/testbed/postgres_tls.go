package testbed

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// TLSOnlyGroup is the role whose members the server admits over TLS alone
// once ServeTLS has run: GRANT it to a role to prove that the role's
// connections were encrypted (a plain one is refused).
const TLSOnlyGroup = "tls_only"

// ServeTLS turns TLS on: a server certificate for 127.0.0.1 signed by a CA
// of the bed's own (ECDSA P-256 and SHA-256, algorithms FIPS 140-3
// approves), ssl=on, and TLSOnlyGroup's members admitted over TLS alone.
// Plain connections of other roles still work. It returns the CA's file,
// the sslrootcert of a verify-full URL (TLSURL). Calling it again returns
// the same file.
func (p *Postgres) ServeTLS(ctx context.Context) (caFile string, err error) {
	caFile = filepath.Join(p.dir, "root.crt")
	if _, err := os.Stat(caFile); err == nil {
		return caFile, nil
	}
	ca, err := newCertAuthority("hap-reconciler test bed PostgreSQL CA")
	if err != nil {
		return "", err
	}
	server, err := ca.issue("127.0.0.1", x509.ExtKeyUsageServerAuth, "127.0.0.1")
	if err != nil {
		return "", err
	}
	certPath, keyPath, err := server.write(p.dataDir(), "server")
	if err != nil {
		return "", err
	}
	for _, f := range []string{certPath, keyPath} {
		if err := os.Chown(f, p.account.uid, p.account.gid); err != nil {
			return "", fmt.Errorf("hand %s to the server's user: %w", f, err)
		}
	}
	// ALTER SYSTEM lands in postgresql.auto.conf, so a Restart keeps TLS
	// on. It runs outside a transaction, so one statement at a time.
	for _, statement := range []string{
		"CREATE ROLE " + TLSOnlyGroup + " NOLOGIN",
		"ALTER SYSTEM SET ssl = on",
		fmt.Sprintf("ALTER SYSTEM SET ssl_cert_file = '%s'", certPath),
		fmt.Sprintf("ALTER SYSTEM SET ssl_key_file = '%s'", keyPath),
	} {
		if err := p.Exec(ctx, "postgres", statement); err != nil {
			return "", err
		}
	}
	// TLSOnlyGroup's members refused without TLS; addHBARules reloads.
	if err := p.addHBARules(ctx, "hostnossl all +"+TLSOnlyGroup+" 127.0.0.1/32 reject"); err != nil {
		return "", err
	}
	if err := os.WriteFile(caFile, ca.pem, 0o644); err != nil {
		return "", err
	}
	// The postmaster reloads its settings and pg_hba.conf together before
	// it forks the next backend: once a verified TLS connection succeeds,
	// both are in force.
	verified := p.TLSURL(p.URL("postgres"), caFile)
	err = pollUntil(ctx, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		conn, err := pgx.Connect(ctx, verified)
		if err != nil {
			return false, nil
		}
		defer conn.Close(context.Background())
		return conn.Ping(ctx) == nil, nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for PostgreSQL to serve TLS: %w\n%s", err, tailFile(p.logPath(), 20))
	}
	return caFile, nil
}

// TLSURL is plainURL (one of URL or RoleURL) over TLS, the server's
// certificate verified against caFile and its name (verify-full).
func (p *Postgres) TLSURL(plainURL, caFile string) string {
	u, err := url.Parse(plainURL)
	if err != nil {
		// URL and RoleURL build it; a parse error is a bug here.
		panic(err)
	}
	q := u.Query()
	q.Set("sslmode", "verify-full")
	q.Set("sslrootcert", caFile)
	u.RawQuery = q.Encode()
	return u.String()
}
