package gardener

import (
	"os"
	"path/filepath"
	"testing"
)

// The fingerprint follows the content behind the path: a Secret mount whose
// ..data symlink is swapped to a new version gives another one, the same
// content the same one.
func TestKubeconfigFingerprintFollowsASwappedSecretMount(t *testing.T) {
	dir := t.TempDir()
	write := func(version, content string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, version), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, version, "kubeconfig"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(version, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.Symlink(filepath.Join("..data", "kubeconfig"), path); err != nil {
		t.Fatal(err)
	}
	fingerprint := func() string {
		t.Helper()
		f, err := KubeconfigFingerprint(path)
		if err != nil || f == "" {
			t.Fatalf("KubeconfigFingerprint: %q, %v", f, err)
		}
		return f
	}

	write("..v1", "token: a")
	first := fingerprint()
	write("..v2", "token: b")
	if fingerprint() == first {
		t.Error("a rotated kubeconfig has the fingerprint of the one before")
	}
	write("..v3", "token: a")
	if fingerprint() != first {
		t.Error("the same content behind a new version has another fingerprint")
	}
	if _, err := KubeconfigFingerprint(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing --kubeconfig has a fingerprint")
	}
}

// In a cluster, without a kubeconfig, there is nothing to fingerprint.
func TestKubeconfigFingerprintIsEmptyInCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	if f, err := KubeconfigFingerprint(""); f != "" || err != nil {
		t.Errorf("KubeconfigFingerprint without a kubeconfig: %q, %v; want empty", f, err)
	}
}
