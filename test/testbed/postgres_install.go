package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
)

// postgresBinEnv names a directory holding initdb and postgres, for machines
// where PostgreSQL lives somewhere else than Debian puts it.
const postgresBinEnv = "HAP_POSTGRES_BIN"

// postgresBinDir returns the directory of initdb and postgres, installing
// Debian's postgresql package when none is found: CI may be a fresh machine.
func postgresBinDir(ctx context.Context) (string, error) {
	if dir := os.Getenv(postgresBinEnv); dir != "" {
		if !hasPostgresBinaries(dir) {
			return "", fmt.Errorf("%s=%q holds no initdb and postgres", postgresBinEnv, dir)
		}
		return dir, nil
	}
	if dir, ok := findPostgresBinDir(); ok {
		return dir, nil
	}
	if err := aptInstall(ctx, "postgresql"); err != nil {
		return "", fmt.Errorf("PostgreSQL is missing and could not be installed: %w", err)
	}
	if dir, ok := findPostgresBinDir(); ok {
		return dir, nil
	}
	return "", fmt.Errorf("PostgreSQL still missing after installing package postgresql")
}

// findPostgresBinDir prefers the newest version Debian installed, then PATH.
func findPostgresBinDir() (string, bool) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return debianMajor(dirs[i]) > debianMajor(dirs[j]) })
	for _, dir := range dirs {
		if hasPostgresBinaries(dir) {
			return dir, true
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil && hasPostgresBinaries(filepath.Dir(initdb)) {
		return filepath.Dir(initdb), true
	}
	return "", false
}

// debianMajor reads 15 from /usr/lib/postgresql/15/bin; 0 when it cannot.
func debianMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasPostgresBinaries(dir string) bool {
	for _, bin := range []string{"initdb", "postgres"} {
		if info, err := os.Stat(filepath.Join(dir, bin)); err != nil || info.IsDir() {
			return false
		}
	}
	return true
}

// serverAccount is the operating-system account the server runs as.
// initdb and postgres refuse to run as root, so as root the test bed runs
// them as the postgres system user; otherwise as the current user.
type serverAccount struct {
	uid, gid   int
	credential *syscall.Credential // nil: run as the current user
}

func postgresServerAccount(ctx context.Context) (serverAccount, error) {
	if os.Geteuid() != 0 {
		return serverAccount{uid: os.Getuid(), gid: os.Getgid()}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		// Debian's package creates the user; a PostgreSQL from elsewhere may not.
		if err := runQuiet(ctx, "useradd", "--system", "--user-group", "--no-create-home",
			"--shell", "/usr/sbin/nologin", "postgres"); err != nil {
			return serverAccount{}, fmt.Errorf("create system user postgres: %w", err)
		}
		if u, err = user.Lookup("postgres"); err != nil {
			return serverAccount{}, fmt.Errorf("look up system user postgres: %w", err)
		}
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return serverAccount{}, fmt.Errorf("system user postgres has uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return serverAccount{}, fmt.Errorf("system user postgres has gid %q: %w", u.Gid, err)
	}
	return serverAccount{
		uid:        uid,
		gid:        gid,
		credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
	}, nil
}

// tempParent is where the server's directory goes. As root, the postgres
// user must be able to reach it, which a private TMPDIR (say under /root)
// does not allow; /tmp always does.
func (a serverAccount) tempParent() string {
	dir := os.TempDir()
	if a.credential == nil || worldTraversable(dir) {
		return dir
	}
	return "/tmp"
}

func worldTraversable(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err != nil || info.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}
