// Package image checks the OCI image archive `make image` writes
// (hack/build-image.sh): it reads the archive as a registry or containerd
// would (index.json, the manifest, the config, the layers, every blob
// against its digest), takes the binary out of the layers and runs its
// --version.
//
// `make image` runs it with the archive and the version and commit it
// built; without -image.archive the test is skipped, so `go test ./...`
// builds no image (a cold build of the static binary takes minutes on two
// cores).
package image_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	archive = flag.String("image.archive", "", "the OCI image archive (oci-archive) to check; empty: skip")
	version = flag.String("image.version", "", "the version --version must print")
	commit  = flag.String("image.commit", "", "the commit --version must print")
)

const (
	binaryPath = "hap-reconciler"
	caBundle   = "etc/ssl/certs/ca-certificates.crt"
	user       = "65532:65532"
	// The mode the image runs its binary in, as KEB's images.
	fipsGODEBUG = "GODEBUG=" + testbed.FIPSOnly
)

// The OCI image-spec types, the fields this test reads.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	Manifests     []descriptor `json:"manifests"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Env        []string          `json:"Env"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// file is one regular file or directory of the image's filesystem.
type file struct {
	hdr  *tar.Header
	data []byte
}

func TestImageArchive(t *testing.T) {
	if *archive == "" {
		t.Skip("no -image.archive: `make image` builds the archive and runs this test on it")
	}
	if *version == "" || *commit == "" {
		t.Fatal("-image.version and -image.commit: what the binary in the image must print")
	}
	outer := readTar(t, *archive, false)

	if got := string(outer["oci-layout"].data); !strings.Contains(got, `"imageLayoutVersion"`) {
		t.Fatalf("oci-layout: %q, not an OCI image layout", got)
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		algo, hexsum, ok := strings.Cut(d.Digest, ":")
		if !ok || algo != "sha256" {
			t.Fatalf("digest %q: want sha256:<hex>", d.Digest)
		}
		f, ok := outer[path.Join("blobs", algo, hexsum)]
		if !ok {
			t.Fatalf("blob %s (%s) is not in the archive", d.Digest, d.MediaType)
		}
		sum := sha256.Sum256(f.data)
		if hex.EncodeToString(sum[:]) != hexsum {
			t.Fatalf("blob %s: its content hashes to sha256:%x", d.Digest, sum)
		}
		if int64(len(f.data)) != d.Size {
			t.Fatalf("blob %s: %d bytes, its descriptor says %d", d.Digest, len(f.data), d.Size)
		}
		return f.data
	}

	var idx index
	decode(t, "index.json", outer["index.json"].data, &idx)
	if idx.SchemaVersion != 2 || len(idx.Manifests) != 1 {
		t.Fatalf("index.json: schemaVersion %d, %d manifests; want 2 and one image", idx.SchemaVersion, len(idx.Manifests))
	}
	md := idx.Manifests[0]
	if md.MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Fatalf("index.json: the manifest is a %s, want an OCI image manifest", md.MediaType)
	}
	if ref := md.Annotations["org.opencontainers.image.ref.name"]; !strings.HasSuffix(ref, "/hap-reconciler:"+*version) {
		t.Errorf("index.json: the image is named %q, want .../hap-reconciler:%s", ref, *version)
	}
	var m manifest
	decode(t, "the manifest", blob(md), &m)
	var cfg imageConfig
	decode(t, "the config", blob(m.Config), &cfg)

	if cfg.OS != "linux" {
		t.Errorf("config: os %q, want linux", cfg.OS)
	}
	if cfg.Config.User != user {
		t.Errorf("config: User %q, want %s (the chart's runAsUser and runAsGroup)", cfg.Config.User, user)
	}
	if want := []string{"/" + binaryPath}; !slices.Equal(cfg.Config.Entrypoint, want) || len(cfg.Config.Cmd) != 0 {
		t.Errorf("config: Entrypoint %q, Cmd %q; want %q and no Cmd (the chart passes args)", cfg.Config.Entrypoint, cfg.Config.Cmd, want)
	}
	if got := cfg.Config.Labels["org.opencontainers.image.revision"]; got != *commit {
		t.Errorf("config: label org.opencontainers.image.revision %q, want %s", got, *commit)
	}
	// FIPS as Kyma runs its images: the Go FIPS 140-3 module only, no
	// hybrid post-quantum key exchange (not an approved algorithm).
	if !slices.Contains(cfg.Config.Env, fipsGODEBUG) {
		t.Errorf("config: Env %q, want %s in it", cfg.Config.Env, fipsGODEBUG)
	}
	if len(m.Layers) != len(cfg.RootFS.DiffIDs) {
		t.Fatalf("%d layers, %d diff_ids", len(m.Layers), len(cfg.RootFS.DiffIDs))
	}

	// The filesystem: the layers applied in order.
	fs := map[string]file{}
	for i, l := range m.Layers {
		data := blob(l)
		switch l.MediaType {
		case "application/vnd.oci.image.layer.v1.tar+gzip":
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("layer %s: %v", l.Digest, err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatalf("layer %s: %v", l.Digest, err)
			}
		case "application/vnd.oci.image.layer.v1.tar":
		default:
			t.Fatalf("layer %s: media type %s", l.Digest, l.MediaType)
		}
		if sum := sha256.Sum256(data); "sha256:"+hex.EncodeToString(sum[:]) != cfg.RootFS.DiffIDs[i] {
			t.Fatalf("layer %s: uncompressed sha256:%x, the config's diff_id is %s", l.Digest, sum, cfg.RootFS.DiffIDs[i])
		}
		for name, f := range readTarBytes(t, l.Digest, data, true) {
			fs[name] = f
		}
	}
	var names []string
	for name := range fs {
		names = append(names, name)
	}
	slices.Sort(names)
	t.Logf("the image's files: %v", names)

	// No shell, no package manager: nothing under bin, sbin or usr.
	for _, name := range names {
		if top, _, _ := strings.Cut(name, "/"); slices.Contains([]string{"bin", "sbin", "usr", "lib", "var"}, top) {
			t.Errorf("%s is in the image: it holds the binary, CA certificates, passwd and group only", name)
		}
		if slices.Contains([]string{"sh", "bash", "ash", "dash", "busybox"}, path.Base(name)) {
			t.Errorf("%s: a shell in the image", name)
		}
	}
	// The CA bundle Go's crypto/x509 reads on Linux.
	if ca, ok := fs[caBundle]; !ok {
		t.Errorf("no /%s", caBundle)
	} else if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(ca.data) {
		t.Errorf("/%s holds no certificate", caBundle)
	}
	if pw := string(fs["etc/passwd"].data); !strings.Contains(pw, ":65532:65532:") {
		t.Errorf("/etc/passwd %q names no user 65532", pw)
	}
	if tmp, ok := fs["tmp"]; !ok || tmp.hdr.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp: want a directory with mode 1777")
	}

	bin, ok := fs[binaryPath]
	if !ok {
		t.Fatalf("no /%s in the image", binaryPath)
	}
	if bin.hdr.Mode&0o111 == 0 || bin.hdr.Uid != 0 {
		t.Errorf("/%s: mode %o owner %d, want executable and root's (the user cannot replace it)", binaryPath, bin.hdr.Mode, bin.hdr.Uid)
	}
	exe := filepath.Join(t.TempDir(), binaryPath)
	if err := os.WriteFile(exe, bin.data, 0o755); err != nil {
		t.Fatal(err)
	}
	// Static: no program interpreter (dynamic loader), so it runs on scratch.
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatalf("/%s: %v", binaryPath, err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("/%s is dynamically linked: it needs a loader the image does not have", binaryPath)
		}
	}
	ef.Close()
	if got, err := testbed.BuiltFIPSModule(exe); err != nil || got != testbed.FIPSModule {
		t.Errorf("/%s: built with GOFIPS140=%q (%v), want %s (the frozen FIPS 140-3 module)", binaryPath, got, err, testbed.FIPSModule)
	}

	if cfg.Architecture != runtime.GOARCH {
		t.Skipf("the image is %s/%s, this machine %s: --version not run", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	// In the image's environment: FIPS-only mode.
	cmd := exec.Command(exe, "--version")
	cmd.Env = cfg.Config.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("/%s --version: %v\n%s", binaryPath, err, out)
	}
	t.Logf("/%s --version: %s", binaryPath, bytes.TrimSpace(out))
	for _, want := range []string{*version, "commit " + *commit} {
		if !strings.Contains(string(out), want) {
			t.Errorf("/%s --version prints %q: want %q in it", binaryPath, out, want)
		}
	}
}

func decode(t *testing.T, what string, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func readTar(t *testing.T, name string, withDirs bool) map[string]file {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return readTarBytes(t, name, data, withDirs)
}

// readTarBytes is a tar's regular files (and directories when asked) by
// their clean path without a leading slash. A layer's whiteouts would
// delete; a one-layer image from scratch has none, so they are refused.
func readTarBytes(t *testing.T, what string, data []byte, withDirs bool) map[string]file {
	t.Helper()
	out := map[string]file{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if strings.HasPrefix(path.Base(name), ".wh.") {
			t.Fatalf("%s: whiteout %s", what, name)
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("%s: %s: %v", what, name, err)
			}
			out[name] = file{hdr: hdr, data: b}
		case tar.TypeDir:
			if withDirs {
				out[name] = file{hdr: hdr}
			}
		default: // links, devices: listed, so that the checks see them
			out[name] = file{hdr: hdr}
		}
	}
}
