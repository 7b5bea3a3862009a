package kebworkers

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// OldModuleCommit is the last commit of main whose newest migration is the
// one before this tree's newest: the provisioning module KEB pinned while
// the job's schema stood one version back, and the job's release of that
// schema. The upgrade tests go from that version to this tree's, so a new
// migration needs this raised to the commit before it (CheckOldModuleCommit
// says so).
const OldModuleCommit = "36f0ebe6e1a9d727b3bec0024828fac1a512d808"

// RepoRoot is the repository the test runs in.
func RepoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the upgrade tests read the old release from git history (a clone, not an export): git rev-parse: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// CheckOldModuleCommit fails the test unless OldModuleCommit's newest
// migration is the one before newest, this tree's.
func CheckOldModuleCommit(t *testing.T, root string, newest int) {
	t.Helper()
	if at := newestMigrationAt(t, root, OldModuleCommit); at != newest-1 {
		t.Fatalf("OldModuleCommit %.12s was built with schema %d; the upgrade goes from %d to %d: set it to the last commit whose newest migration is %d",
			OldModuleCommit, at, newest-1, newest, newest-1)
	}
}

// newestMigrationAt is the newest migration's version in commit's tree.
func newestMigrationAt(t *testing.T, root, commit string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-tree", "--name-only", commit, "internal/db/migrations/").Output()
	if err != nil {
		t.Fatalf("list the migrations of %s (a shallow clone lacks it: fetch the history): %v", commit, err)
	}
	newest := 0
	for _, path := range strings.Fields(string(out)) {
		number, _, _ := strings.Cut(filepath.Base(path), "_")
		if v, err := strconv.Atoi(number); err == nil && v > newest {
			newest = v
		}
	}
	return newest
}

// OldModuleBinary is testdata/oldmodule built against the module of
// OldModuleCommit by hack/build-old-module.sh, cached outside the
// repository.
func OldModuleBinary(t *testing.T, ctx context.Context, root string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-old-module.sh"), OldModuleCommit)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-old-module.sh %s: %v", OldModuleCommit, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// Module is one KEB replica's module, whichever pin: the calls of KEB's
// resolve step.
type Module interface {
	pick(ctx context.Context, req provisioning.Request) answer
	record(ctx context.Context, req provisioning.Request, binding string) error
	abandon(ctx context.Context, req provisioning.Request) error
}

// answer is what KEB's step reads of NextBinding's answer.
type answer struct {
	binding  string
	claimNew bool
	// err is the error's message; livePath, pending and guarded what KEB
	// makes of it.
	err              string
	livePath         bool
	pending, guarded bool
	retryAfter       time.Duration
	// failed is the test's own failure to ask (the old module's process).
	failed string
}

// The answers' kinds in the figures; the first four are the ones KEB goes
// on from.
const (
	kindBinding      = "binding"
	kindClaimNew     = "claimNew"
	kindClaimPending = "claim pending"
	kindLivePath     = "live path"
	kindGuarded      = "guarded"
	kindError        = "error"
	kindNotAsked     = "not asked"
	// kindRecordFailed is a RecordClaim that failed, among the answers.
	kindRecordFailed = "record failed"
)

// kind names the answer for the figures.
func (a answer) kind() string {
	switch {
	case a.failed != "":
		return kindNotAsked
	case a.guarded:
		return kindGuarded
	case a.pending:
		return kindClaimPending
	case a.livePath:
		return kindLivePath
	case a.err != "":
		return kindError
	case a.claimNew:
		return kindClaimNew
	}
	return kindBinding
}

// newModule is this tree's module on a replica's own pool, as KEB's
// adapter configures it at the adoption guide's third tier.
type newModule struct {
	c     *provisioning.Client
	limit int
}

// NewModule is a replica on this tree's module, on l's database and
// Gardener.
func NewModule(t *testing.T, l Landscape) Module {
	t.Helper()
	pool, err := sql.Open("postgres", l.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	c := &provisioning.Client{DB: pool, Gardener: l.KEB.Gardener(), HoldClaims: true}
	t.Cleanup(func() { _ = c.Close(); _ = pool.Close() })
	return newModule{c: c, limit: l.Limit}
}

func (m newModule) pick(ctx context.Context, req provisioning.Request) answer {
	pick, err := m.c.NextBinding(ctx, req)
	a := answer{binding: pick.Binding, claimNew: pick.ClaimNew}
	if err != nil {
		var pending *provisioning.ClaimPendingError
		a.err, a.livePath, a.guarded = err.Error(), provisioning.LivePath(err), errors.Is(err, provisioning.ErrGuarded)
		if errors.As(err, &pending) {
			a.pending, a.retryAfter = true, pending.RetryAfter
		}
	}
	return a
}

func (m newModule) record(ctx context.Context, req provisioning.Request, binding string) error {
	limit := m.limit
	return m.c.RecordClaim(ctx, provisioning.Claim{Request: req, BindingName: binding, Limit: &limit})
}

func (m newModule) abandon(ctx context.Context, req provisioning.Request) error {
	return m.c.AbandonClaim(ctx, req)
}

// oldModule is one KEB replica on the old pin: a process of its own, asked
// one call at a time (testdata/oldmodule).
type oldModule struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Scanner
}

// StartOldModule starts a replica on the old pin, the binary
// OldModuleBinary built, on l's database and Gardener.
func StartOldModule(t *testing.T, bin string, l Landscape) Module {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, l.Gardener.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-database-url", l.DatabaseURL, "-server", l.Gardener.Host, "-ca", ca, "-namespace", l.Namespace)
	cmd.Env = append(os.Environ(), "OLDMODULE_TOKEN="+l.Gardener.BearerToken)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	scanner := bufio.NewScanner(out)
	scanner.Buffer(make([]byte, 0, 64<<10), 1<<20)
	return &oldModule{in: in, out: scanner}
}

// oldAsk and oldAnswer are testdata/oldmodule's protocol: the request goes
// as this tree's module names its fields, which the old module's Request
// shares.
type oldAsk struct {
	Op      string
	Request provisioning.Request
	Binding string
}

type oldAnswer struct {
	Binding      string `json:"binding"`
	ClaimNew     bool   `json:"claimNew"`
	Err          string `json:"error"`
	LivePath     bool   `json:"livePath"`
	ClaimPending bool   `json:"claimPending"`
	RetryAfterNs int64  `json:"retryAfterNs"`
	Guarded      bool   `json:"guarded"`
}

func (m *oldModule) call(op string, req provisioning.Request, binding string) (oldAnswer, error) {
	line, err := json.Marshal(oldAsk{Op: op, Request: req, Binding: binding})
	if err != nil {
		return oldAnswer{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.in.Write(append(line, '\n')); err != nil {
		return oldAnswer{}, fmt.Errorf("ask the old module: %w", err)
	}
	if !m.out.Scan() {
		return oldAnswer{}, fmt.Errorf("the old module answered nothing: %v", m.out.Err())
	}
	var ans oldAnswer
	return ans, json.Unmarshal(m.out.Bytes(), &ans)
}

// pick, record and abandon are the module's calls as KEB's resolve step
// makes them (pinned module).
func (m *oldModule) pick(_ context.Context, req provisioning.Request) answer {
	a, err := m.call("pick", req, "")
	if err != nil {
		return answer{failed: err.Error()}
	}
	return answer{binding: a.Binding, claimNew: a.ClaimNew, err: a.Err, livePath: a.LivePath, pending: a.ClaimPending,
		retryAfter: time.Duration(a.RetryAfterNs), guarded: a.Guarded}
}

func (m *oldModule) record(_ context.Context, req provisioning.Request, binding string) error {
	return m.errorOf(m.call("record", req, binding))
}

func (m *oldModule) abandon(_ context.Context, req provisioning.Request) error {
	return m.errorOf(m.call("abandon", req, ""))
}

func (m *oldModule) errorOf(a oldAnswer, err error) error {
	if err != nil {
		return err
	}
	if a.Err != "" {
		return fmt.Errorf("old module: %s", a.Err)
	}
	return nil
}
