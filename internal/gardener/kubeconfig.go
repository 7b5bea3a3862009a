package gardener

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigFingerprint hashes the content of the kubeconfig files
// RESTConfig(path) reads: path, else every file KUBECONFIG lists (a missing
// one counts as missing, as the loader skips it). It is empty for the
// in-cluster config, whose token file client-go re-reads by itself. Two
// equal fingerprints mean the same kubeconfig; a mounted Secret that
// Kubernetes updated (by swapping its ..data symlink) gives another.
func KubeconfigFingerprint(path string) (string, error) {
	files := []string{path}
	if path == "" {
		files = filepath.SplitList(os.Getenv(clientcmd.RecommendedConfigPathEnvVar))
	}
	h, hashed := sha256.New(), 0
	for _, f := range files {
		if f == "" {
			continue
		}
		hashed++
		data, err := os.ReadFile(f)
		switch {
		case errors.Is(err, fs.ErrNotExist) && path == "":
			fmt.Fprintf(h, "%q missing\n", f)
			continue
		case err != nil:
			return "", fmt.Errorf("read kubeconfig: %w", err)
		}
		fmt.Fprintf(h, "%q %d\n", f, len(data))
		h.Write(data)
	}
	if hashed == 0 {
		return "", nil
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
