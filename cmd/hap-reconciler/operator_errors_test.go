package main

import (
	"bytes"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// Each error an operator can meet ends the command with one line that says
// what to check.

func TestNoAccessToTheNamespaceSaysToCheckRBAC(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	kubeconfig := impersonating(t, "hap-without-rbac")
	code, _, errOut := execCLI(t, "run", "--config", s.ConfigPath, "--namespace", s.World.Namespace,
		"--kubeconfig", kubeconfig, "--database-url", s.World.DatabaseURL)
	line := oneLine(t, code, errOut)
	for _, want := range []string{
		"run failed: the picture is incomplete, nothing was changed: ",
		`in Gardener project namespace "` + s.World.Namespace + `": check that the job's identity`,
		"may get, list and watch shoots and credentialsbindings there",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("%q does not say %q", line, want)
		}
	}
}

func TestWrongDatabaseCredentialsSayToCheckUserAndPassword(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	role, password, wrong := "role_"+s.World.DatabaseName, "the-right-one", "not-the-password-4711"
	if err := bed.Postgres.CreateRole(testContext(t), role, password); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := execCLI(t, "report", "--config", s.ConfigPath,
		"--database-url", bed.Postgres.RoleURL(role, wrong, s.World.DatabaseName))
	line := oneLine(t, code, errOut)
	if !strings.HasPrefix(line, "hap-reconciler: KEB's database refused the job's login: check the user and password") {
		t.Errorf("got %q", line)
	}
	if strings.Contains(line, wrong) {
		t.Errorf("the message shows the password: %q", line)
	}
}

func TestUnreachableOrMissingDatabaseSaysWhatToCheck(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	for _, c := range []struct {
		name, url, want string
	}{
		{"no such database", bed.Postgres.URL("no_such_database"), "hap-reconciler: the database does not exist on that server: check the database name"},
		{"nothing listens", "postgres://postgres@" + closedAddress(t) + "/broker?sslmode=disable&connect_timeout=5",
			"hap-reconciler: cannot reach KEB's database: check the host and port"},
	} {
		code, _, errOut := execCLI(t, "report", "--config", s.ConfigPath, "--database-url", c.url)
		if line := oneLine(t, code, errOut); !strings.HasPrefix(line, c.want) {
			t.Errorf("%s: got %q", c.name, line)
		}
	}
}

func TestUnreachableGardenerSaysToCheckTheServerAddress(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	cfg, err := clientcmd.LoadFromFile(bed.Kube.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	host := "https://" + closedAddress(t)
	for _, cluster := range cfg.Clusters {
		cluster.Server = host
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := execCLI(t, "report", "--live", "--config", s.ConfigPath, "--namespace", s.World.Namespace,
		"--kubeconfig", kubeconfig, "--database-url", s.World.DatabaseURL)
	if line := oneLine(t, code, errOut); !strings.Contains(line, "cannot reach Gardener at "+host+": check the server address in the kubeconfig") {
		t.Errorf("got %q", line)
	}
}

func TestMissingSchemaSaysToMigrate(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	code, _, errOut := s.cli(t, "report")
	line := oneLine(t, code, errOut)
	if !strings.HasPrefix(line, "hap-reconciler: reading the candidate table: the job's tables are not in schema \"hap\" of this database: "+
		"run `hap-reconciler migrate` against it first") {
		t.Errorf("got %q", line)
	}
}

func TestGardenerKindsNotServedSaysToCheckTheKubeconfig(t *testing.T) {
	// A kube-apiserver of its own that serves no Gardener kind, as a
	// kubeconfig pointing at a cluster other than the garden would.
	kube := testbed.KubeForTest(t, testbed.WithGardenerKinds(testbed.NoGardenerKinds))
	ns, err := kube.NewNamespace(testContext(t), "garden-nocrds")
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, tinyLandscape(), plantedConfig)
	s.mustRun(t, "migrate")
	code, _, errOut := execCLI(t, "report", "--live", "--config", s.ConfigPath, "--namespace", ns,
		"--kubeconfig", kube.KubeconfigPath(), "--database-url", s.World.DatabaseURL)
	line := oneLine(t, code, errOut)
	for _, want := range []string{
		"Gardener at " + kube.Config().Host + " does not serve ",
		"check that the kubeconfig points at the Gardener API of the project (the garden cluster)",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("%q does not say %q", line, want)
		}
	}
}

func TestLockHeldSaysAnotherRunHoldsIt(t *testing.T) {
	s := load(t, tinyLandscape(), plantedConfig)
	s.mustRun(t, "migrate")
	holder, err := db.Open(testContext(t), s.World.DatabaseURL, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	lock, held, err := holder.TryRunLock(testContext(t))
	if err != nil || !held {
		t.Fatalf("taking the lock: held %v, %v", held, err)
	}
	defer lock.Release()
	code, _, errOut := s.cli(t, "run")
	if code != exitOK {
		t.Fatalf("a run that finds the lock held exits %d, want %d\n%s", code, exitOK, errOut)
	}
	line := strings.TrimSpace(withoutStartupLines(errOut))
	if strings.Contains(line, "\n") || !strings.Contains(line, "another run holds this landscape's lock") {
		t.Errorf("want one line saying another run holds the lock, got\n%s", errOut)
	}
}

// execCLI runs hap-reconciler in-process with exactly args, returning its
// stdout and its log stream (see scene.cli).
func execCLI(t *testing.T, args ...string) (code int, stdout, logs string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = execute(testContext(t), args, &out, &errOut, func(string) string { return "" })
	if len(args) > 0 && logStream(args[0], &out, &errOut) == &errOut {
		return code, out.String(), errOut.String()
	}
	return code, out.String(), out.String()
}

// oneLine asserts the command failed with exactly one line, a JSON line at
// ERROR as KEB's log queries expect, and returns its message.
func oneLine(t *testing.T, code int, logs string) string {
	t.Helper()
	if code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	line := strings.TrimSpace(withoutStartupLines(logs))
	var entry struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
	}
	if strings.Contains(line, "\n") || json.Unmarshal([]byte(line), &entry) != nil || entry.Level != "ERROR" ||
		!strings.HasPrefix(entry.Msg, "hap-reconciler: ") {
		t.Errorf("want one JSON line at level ERROR whose msg starts hap-reconciler:, got\n%s", logs)
	}
	t.Log(entry.Msg)
	return entry.Msg
}

// closedAddress is a local address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func tinyLandscape() *landscape.Landscape {
	return landscape.Generate(landscape.Options{Seed: 1, GlobalAccounts: 1, ShootsPerGlobalAccount: 1, FreeBindingsPerPool: 1})
}

// impersonating writes a copy of the test bed's kubeconfig whose requests
// act as user, whom no RBAC rule grants anything.
func impersonating(t *testing.T, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(bed.Kube.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// withoutStartupLines drops what every command logs once at start (the
// configuration's warnings and the multi-account policy in effect), leaving
// what it says about its outcome.
func withoutStartupLines(stderr string) string {
	var kept []string
	for _, line := range strings.Split(stderr, "\n") {
		var entry struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil &&
			(entry.Msg == app.PolicyMessage || entry.Msg == app.MigrationsMessage || strings.HasPrefix(entry.Msg, "configuration: ")) {
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}
