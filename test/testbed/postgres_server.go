package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// postgresServer is one running postmaster. It differs from the API server's
// process in two ways that matter: it may have to run as another user, and it
// is stopped with SIGQUIT, PostgreSQL's immediate shutdown, since SIGTERM
// would wait for every client to disconnect.
type postgresServer struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed once the postmaster has been reaped
	waitErr error
}

// serverSettings keep the throwaway server small and fast. fsync=off only
// gives up durability against an operating-system crash, which tests never
// see; synchronous_commit stays on because with it off a Restart (an
// immediate shutdown) would lose transactions that had reported success.
var serverSettings = []string{
	"listen_addresses=127.0.0.1",
	"fsync=off",
	"full_page_writes=off",
	"shared_buffers=16MB",
	"max_connections=150",
}

// initDataDir runs initdb, with locale or, when it is "", none (C).
// Local and host connections of the superuser are trusted; everyone else
// must give a password over TCP (see pgHBA).
func initDataDir(ctx context.Context, binDir, dataDir, locale string, acct serverAccount) error {
	localeArg := "--no-locale"
	if locale != "" {
		localeArg = "--locale=" + locale
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"),
		"--pgdata", dataDir,
		"--username", superuser,
		"--auth", "trust",
		"--encoding", "UTF8",
		localeArg,
		"--no-sync",
	)
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.credential}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w\n%s", dataDir, err, lastLines(out, 20))
	}
	hba := filepath.Join(dataDir, "pg_hba.conf")
	if err := os.WriteFile(hba, []byte(pgHBA), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", hba, err)
	}
	if err := os.Chown(hba, acct.uid, acct.gid); err != nil {
		return fmt.Errorf("hand %s to the server's user: %w", hba, err)
	}
	return nil
}

// pgHBA: the first matching line wins. Roles other than the superuser
// authenticate with SCRAM over TCP, which is what tests of least privilege
// and of password redaction need.
const pgHBA = pgHBATrusted + pgHBAPassword

const (
	pgHBATrusted = `# TYPE  DATABASE  USER       ADDRESS       METHOD
local   all       all                      trust
host    all       ` + superuser + `   127.0.0.1/32  trust
`
	pgHBAPassword = `host    all       all        127.0.0.1/32  scram-sha-256
`
)

func startPostgresServer(binDir, dataDir, socketDir, logPath string, port int, acct serverAccount) (*postgresServer, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL log: %w", err)
	}
	args := []string{"-D", dataDir, "-p", strconv.Itoa(port), "-k", socketDir}
	for _, s := range serverSettings {
		args = append(args, "-c", s)
	}
	cmd := exec.Command(filepath.Join(binDir, "postgres"), args...)
	cmd.Env = serverEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Its own process group keeps a Ctrl-C of the test run from reaching it
	// before Stop does; the parent-death signal ends it when the test
	// process dies without calling Stop. Go sets that signal after switching
	// user, so it survives the switch.
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: acct.credential,
		Setpgid:    true,
		Pdeathsig:  syscall.SIGQUIT,
	}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	s := &postgresServer{cmd: cmd, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(s.done)
	}()
	return s, nil
}

func (s *postgresServer) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stopImmediately is PostgreSQL's immediate shutdown: the postmaster ends
// its backends and exits without a checkpoint, as a crash would. The next
// start recovers from the WAL. It returns once the postmaster is reaped, and
// the postmaster waits for its children, so nothing is left running.
func (s *postgresServer) stopImmediately() error {
	if s.exited() {
		// Signalling a reaped pid could hit an unrelated process.
		return nil
	}
	pid := s.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop postgres (pid %d): %w", pid, err)
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(30 * time.Second):
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill postgres process group %d: %w", pid, err)
	}
	<-s.done
	return nil
}

// serverEnv is the environment without PG* variables, which would
// otherwise steer initdb and postgres (PGDATA, PGPORT, ...), and with the C
// locale, which every machine has.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LANG=C", "LC_ALL=C")
}
