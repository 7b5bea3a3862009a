package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// addHBARules puts lines into pg_hba.conf after the superuser's and before
// the password line that admits every other role (the first matching line
// wins), and has the server reload it. The caller waits for the change to
// be in force.
func (p *Postgres) addHBARules(ctx context.Context, lines ...string) error {
	p.mu.Lock()
	p.hbaRules = append(p.hbaRules, lines...)
	content := pgHBATrusted + strings.Join(p.hbaRules, "\n") + "\n" + pgHBAPassword
	p.mu.Unlock()
	hba := filepath.Join(p.dataDir(), "pg_hba.conf")
	if err := os.WriteFile(hba, []byte(content), 0o600); err != nil {
		return err
	}
	if err := os.Chown(hba, p.account.uid, p.account.gid); err != nil {
		return fmt.Errorf("hand %s to the server's user: %w", hba, err)
	}
	return p.Exec(ctx, "postgres", "SELECT pg_reload_conf()")
}

// CreateMD5Role creates a login role whose password is stored as MD5 and
// which the server asks for MD5 password authentication, as an old cluster
// may still have; it returns once such a login succeeds.
func (p *Postgres) CreateMD5Role(ctx context.Context, role, password string) error {
	if err := p.createRole(ctx, role, password, "SET password_encryption = 'md5'; "); err != nil {
		return err
	}
	if err := p.addHBARules(ctx, "host all "+role+" 127.0.0.1/32 md5"); err != nil {
		return err
	}
	// Until the reload, the password line asks for SCRAM, which an MD5
	// password cannot answer.
	return pollUntil(ctx, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		conn, err := pgx.Connect(ctx, p.RoleURL(role, password, "postgres"))
		if err != nil {
			return false, nil
		}
		defer conn.Close(context.Background())
		return conn.Ping(ctx) == nil, nil
	})
}
