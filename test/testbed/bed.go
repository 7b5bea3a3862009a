package testbed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Bed is a whole test bed: a kube-apiserver serving the Gardener kinds and a
// PostgreSQL. Each World in it gets a namespace and a database of its own, so
// one Bed serves a package's tests without them seeing each other.
type Bed struct {
	Kube     *Kube
	Postgres *Postgres
	worlds   atomic.Int64
}

// StartBed starts both servers.
func StartBed(ctx context.Context, opts ...KubeOption) (*Bed, error) {
	return startBed(ctx, "", opts...)
}

// Stop stops both servers and removes their data.
func (b *Bed) Stop() error {
	return errors.Join(b.Kube.Stop(), b.Postgres.Stop())
}

// World is one landscape's place in the bed: a Gardener project namespace and
// a database holding KEB's instances table.
type World struct {
	Namespace    string
	DatabaseName string
	// DatabaseURL is the superuser URL of the world's database.
	DatabaseURL string
}

// NewWorld creates a fresh namespace and database; name is a readable prefix.
func (b *Bed) NewWorld(ctx context.Context, name string) (*World, error) {
	ns, err := b.Kube.NewNamespace(ctx, "garden-"+name)
	if err != nil {
		return nil, err
	}
	dbName := fmt.Sprintf("%s_%d", strings.ReplaceAll(strings.ToLower(name), "-", "_"), b.worlds.Add(1))
	url, err := b.Postgres.NewDatabase(ctx, dbName)
	if err != nil {
		return nil, err
	}
	return &World{Namespace: ns, DatabaseName: dbName, DatabaseURL: url}, nil
}

// BedForTest starts a Bed for one test, with opts for its Kube, and stops
// it when the test ends: for the few tests that need a bed unlike their
// package's, such as one with the Gardener kinds as CRDs.
func BedForTest(tb testing.TB, opts ...KubeOption) *Bed {
	tb.Helper()
	Require(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	b, err := StartBed(ctx, opts...)
	if err != nil {
		tb.Fatalf("start the test bed: %v", err)
	}
	tb.Cleanup(func() {
		if err := b.Stop(); err != nil {
			tb.Errorf("stop the test bed: %v", err)
		}
	})
	return b
}
