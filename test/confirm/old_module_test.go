package confirm

import (
	"bufio"
	"context"
	"encoding/json"
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

// oldModuleCommit is the last commit of main whose newest migration is the
// one before this tree's newest: the provisioning module KEB pinned while
// the job's schema stood one version back. The upgrade test migrates from
// that version to this tree's, so a new migration needs this raised to the
// commit before it (TestPicksThroughAnUpgradeAndRollbackOfTheJob says so).
const oldModuleCommit = "36f0ebe6e1a9d727b3bec0024828fac1a512d808"

// repoRoot is the repository the test runs in.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the upgrade test reads the old module from git history (a clone, not an export): git rev-parse: %v", err)
	}
	return strings.TrimSpace(string(out))
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

// oldModuleBinary is testdata/oldmodule built against the module of
// oldModuleCommit by hack/build-old-module.sh, cached outside the
// repository.
func oldModuleBinary(t *testing.T, ctx context.Context, root string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-old-module.sh"), oldModuleCommit)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-old-module.sh %s: %v", oldModuleCommit, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// oldModule is one KEB replica on the old pin: a process of its own, asked
// one call at a time (testdata/oldmodule).
type oldModule struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Scanner
}

// startOldModule starts the replica on the scene's database and Gardener.
func (s *scene) startOldModule(t *testing.T, bin string) *oldModule {
	t.Helper()
	cfg := s.sc.Bed.Kube.Config()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, cfg.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-database-url", s.sc.World.DatabaseURL, "-server", cfg.Host, "-ca", ca, "-namespace", s.sc.World.Namespace)
	cmd.Env = append(os.Environ(), "OLDMODULE_TOKEN="+cfg.BearerToken)
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
