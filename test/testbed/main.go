package testbed

import (
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Setup is what a package's TestMain asks of the test bed.
type Setup struct {
	// Bed receives the started Bed, which the package's tests share.
	Bed **Bed
	// Postgres, for a package that needs PostgreSQL alone, receives it
	// where Bed is nil.
	Postgres **Postgres
	// Locale is the PostgreSQL cluster's locale (CollatingLocale for the
	// collation tests); "" leaves the server's default.
	Locale string
	// Binary, when set, receives the path of hap-reconciler built from
	// this tree, for the tests that run it as a process of its own.
	Binary *string
	// Kube are the options of the Bed's kube-apiserver.
	Kube []KubeOption
}

// Main is the TestMain of a package that shares one Bed: it parses the
// flags, builds the binary if asked, starts the Bed into *s.Bed (or
// PostgreSQL alone into *s.Postgres), runs the tests, stops what it
// started and exits with the tests' code. Under -short it starts and
// builds nothing.
func Main(m *testing.M, s Setup) {
	flag.Parse()
	os.Exit(run(m, s))
}

func run(m *testing.M, s Setup) int {
	if Short() {
		return m.Run()
	}
	if s.Binary != nil {
		dir, err := os.MkdirTemp("", "hap-reconciler-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		*s.Binary, err = BuildBinary(ctx, dir)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	stop, err := s.start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test bed:", err)
		return 1
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test bed:", err)
		}
	}()
	return m.Run()
}

// start starts the Bed, or PostgreSQL alone where no Bed is asked for, and
// returns what stops it.
func (s Setup) start(ctx context.Context) (stop func() error, err error) {
	if s.Bed == nil {
		pg, err := startPostgres(ctx, s.Locale)
		if err != nil {
			return nil, err
		}
		*s.Postgres = pg
		return pg.Stop, nil
	}
	b, err := startBed(ctx, s.Locale, s.Kube...)
	if err != nil {
		return nil, err
	}
	*s.Bed = b
	return b.Stop, nil
}

// startBed starts PostgreSQL in locale, then the kube-apiserver.
func startBed(ctx context.Context, locale string, opts ...KubeOption) (*Bed, error) {
	pg, err := startPostgres(ctx, locale)
	if err != nil {
		return nil, err
	}
	kube, err := StartKube(ctx, opts...)
	if err != nil {
		return nil, errors.Join(err, pg.Stop())
	}
	return &Bed{Kube: kube, Postgres: pg}, nil
}

// startPostgres starts PostgreSQL in locale, naming where the locale comes
// from when that fails.
func startPostgres(ctx context.Context, locale string) (*Postgres, error) {
	pg, err := StartPostgresWithLocale(ctx, locale)
	if err != nil && locale != "" {
		return nil, fmt.Errorf("PostgreSQL in %s (hack/ensure-tools.sh generates the locale): %w", locale, err)
	}
	return pg, err
}

// The Go FIPS 140-3 module the binary is built with (GOFIPS140, as make
// build and the image build it) and the GODEBUG the image runs it with:
// FIPS-only, no hybrid post-quantum key exchange in TLS.
const (
	FIPSModule = "v1.0.0"
	FIPSOnly   = "fips140=only,tlsmlkem=0"
)

// BuildBinary builds hap-reconciler from this tree into dir, with the FIPS
// module as released, and returns its path; the go command's output goes
// to stderr.
func BuildBinary(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "hap-reconciler")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/kyma-project/hap-reconciler/cmd/hap-reconciler")
	build.Env = append(os.Environ(), "GOFIPS140="+FIPSModule)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building hap-reconciler: %w", err)
	}
	return bin, nil
}

// BuiltFIPSModule is the FIPS module version a Go binary was built with
// (GOFIPS140), "" for none. Go records the version with its snapshot's
// hash (v1.0.0-c2097c7c); the hash is cut off.
func BuiltFIPSModule(binary string) (string, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return "", err
	}
	for _, s := range info.Settings {
		if s.Key == "GOFIPS140" {
			version, _, _ := strings.Cut(s.Value, "-")
			return version, nil
		}
	}
	return "", nil
}
