package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/provisioning/schema"
)

// superuser is the role initdb creates; it is trusted on local and
// loopback connections, which is fine for a throwaway cluster.
const superuser = "postgres"

// postgresStartTimeout bounds how long a fresh or restarted server may take
// to accept connections when the caller's context sets no deadline.
const postgresStartTimeout = 60 * time.Second

// Postgres is a throwaway PostgreSQL cluster in a temporary directory,
// listening on 127.0.0.1 on a free port.
type Postgres struct {
	dir     string
	binDir  string
	account serverAccount
	port    int
	locale  string

	mu      sync.Mutex
	server  *postgresServer
	stopped bool
}

// StartPostgres creates a cluster with the C locale and returns once it
// accepts connections. Call Stop to end it and remove its files.
func StartPostgres(ctx context.Context) (*Postgres, error) { return StartPostgresWithLocale(ctx, "") }

// CollatingLocale is a locale whose text order is not byte order (in it
// "aws1a" sorts before "aws-1b"), as production clusters are often created
// with. hack/ensure-tools.sh generates it when the machine lacks it.
const CollatingLocale = "en_US.UTF-8"

// StartPostgresWithLocale is StartPostgres for a cluster created with the
// given locale ("" for C): its databases collate text in that locale's order.
func StartPostgresWithLocale(ctx context.Context, locale string) (*Postgres, error) {
	binDir, err := postgresBinDir(ctx)
	if err != nil {
		return nil, err
	}
	account, err := postgresServerAccount(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(account.tempParent(), "hap-pg-")
	if err != nil {
		return nil, fmt.Errorf("create PostgreSQL directory: %w", err)
	}
	p := &Postgres{dir: dir, binDir: binDir, account: account, locale: locale}
	if err := p.create(ctx); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *Postgres) create(ctx context.Context) error {
	if err := os.Chown(p.dir, p.account.uid, p.account.gid); err != nil {
		return fmt.Errorf("hand %s to the server's user: %w", p.dir, err)
	}
	if err := initDataDir(ctx, p.binDir, p.dataDir(), p.locale, p.account); err != nil {
		return err
	}
	// A free port can be taken by someone else before the server binds it;
	// a few fresh ports make that race harmless.
	var err error
	for attempt := 0; attempt < portAttempts; attempt++ {
		if p.port, err = freePort(); err != nil {
			return err
		}
		if err = p.start(ctx); !errors.Is(err, errPortTaken) {
			return err
		}
	}
	return err
}

// start runs the postmaster on p.port and waits until it accepts
// connections, or until it exits, in which case the log tells why.
func (p *Postgres) start(ctx context.Context) error {
	server, err := startPostgresServer(p.binDir, p.dataDir(), p.dir, p.logPath(), p.port, p.account)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.server = server
	p.mu.Unlock()

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, postgresStartTimeout)
		defer cancel()
	}
	err = pollUntil(ctx, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		if server.exited() {
			log := tailFile(p.logPath(), 20)
			if strings.Contains(log, "Address already in use") {
				return false, errPortTaken
			}
			return false, fmt.Errorf("postgres exited during startup: %v\n%s", server.waitErr, log)
		}
		return p.accepting(ctx), nil
	})
	if err != nil {
		_ = server.stopImmediately()
		if errors.Is(err, errPortTaken) {
			return err
		}
		return fmt.Errorf("wait for PostgreSQL on port %d: %w\n%s", p.port, err, tailFile(p.logPath(), 20))
	}
	return nil
}

// accepting reports whether the server completes a query; "the database
// system is starting up" and refused connections both mean not yet.
func (p *Postgres) accepting(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		return false
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx) == nil
}

// URL is the superuser's connection URL for database dbname.
func (p *Postgres) URL(dbname string) string {
	return p.urlFor(url.User(superuser), dbname)
}

// RoleURL is the connection URL of a password-authenticated role.
func (p *Postgres) RoleURL(role, password, dbname string) string {
	return p.urlFor(url.UserPassword(role, password), dbname)
}

func (p *Postgres) urlFor(user *url.Userinfo, dbname string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     user,
		Host:     net.JoinHostPort("127.0.0.1", fmt.Sprint(p.port)),
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on.
func (p *Postgres) Port() int { return p.port }

// NewDatabase creates database name holding an empty KEB instances table,
// with the index KEB adds for the read path (schema.KEBIndexUp),
// and returns its superuser URL.
func (p *Postgres) NewDatabase(ctx context.Context, name string) (string, error) {
	if err := checkIdentifier("database name", name); err != nil {
		return "", err
	}
	if err := p.Exec(ctx, "postgres", "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	if err := p.Exec(ctx, name, KEBInstancesDDL); err != nil {
		return "", fmt.Errorf("create KEB instances table in %s: %w", name, err)
	}
	if err := p.Exec(ctx, name, schema.KEBIndexUp); err != nil {
		return "", fmt.Errorf("add KEB's index for the read path in %s: %w", name, err)
	}
	return p.URL(name), nil
}

// CreateRole creates a login role that must authenticate with password over
// TCP, and which holds no privileges beyond what a fresh role has.
func (p *Postgres) CreateRole(ctx context.Context, role, password string) error {
	if err := checkIdentifier("role name", role); err != nil {
		return err
	}
	literal := "'" + strings.ReplaceAll(password, "'", "''") + "'"
	if err := p.Exec(ctx, "postgres", "CREATE ROLE "+role+" LOGIN PASSWORD "+literal); err != nil {
		return fmt.Errorf("create role %s: %w", role, err)
	}
	return nil
}

// Exec runs statements as the superuser in database dbname. Without args
// the text may hold several statements.
func (p *Postgres) Exec(ctx context.Context, dbname, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, p.URL(dbname))
	if err != nil {
		return fmt.Errorf("connect to database %s: %w", dbname, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("in database %s: %w", dbname, err)
	}
	return nil
}

// Restart stops the server the way a crash would and starts it again on the
// same port, for tests of how clients live through an outage.
func (p *Postgres) Restart(ctx context.Context) error {
	p.mu.Lock()
	server, stopped := p.server, p.stopped
	p.mu.Unlock()
	if stopped {
		return errors.New("restart PostgreSQL: already stopped")
	}
	if err := server.stopImmediately(); err != nil {
		return err
	}
	if err := p.start(ctx); err != nil {
		return fmt.Errorf("restart PostgreSQL on port %d: %w", p.port, err)
	}
	return nil
}

// Stop shuts the server down immediately and removes its directory. It is
// safe to call more than once.
func (p *Postgres) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	p.stopped = true
	var errs []error
	if p.server != nil {
		errs = append(errs, p.server.stopImmediately())
	}
	if err := os.RemoveAll(p.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", p.dir, err))
	}
	return errors.Join(errs...)
}

func (p *Postgres) dataDir() string { return filepath.Join(p.dir, "data") }
func (p *Postgres) logPath() string { return filepath.Join(p.dir, "postgres.log") }

// LogPath is the server's log file, for measurements that read what the
// server logs (lock waits, say).
func (p *Postgres) LogPath() string { return p.logPath() }

var identifierPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// checkIdentifier accepts only names that need no quoting, so they can be
// put into statements as they are.
func checkIdentifier(field, name string) error {
	if !identifierPattern.MatchString(name) {
		return fmt.Errorf("%s %q: want lower-case letters, digits and _, not starting with a digit, at most 63", field, name)
	}
	return nil
}
