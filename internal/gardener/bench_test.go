package gardener

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

var (
	benchOnce      sync.Once
	benchNamespace string
	benchShoots    int
	benchErr       error
)

// loadBenchLandscape seeds a production-sized project (about 2,000 shoots)
// into the real gardener-apiserver's storage once for all benchmarks.
func loadBenchLandscape(b *testing.B) string {
	server := gardenerAPIServer(b)
	benchOnce.Do(func() {
		ctx := context.Background()
		benchNamespace, benchErr = server.kube.NewNamespace(ctx, "garden-bench")
		if benchErr != nil {
			return
		}
		l := landscape.Generate(landscape.Options{Seed: 2000, GlobalAccounts: 350})
		benchShoots = len(l.Shoots)
		start := time.Now()
		benchErr = landscape.SeedGardenerAPIServer(ctx, server.kube, benchNamespace, l, nil)
		b.Logf("seeded %d shoots and %d bindings in %s", len(l.Shoots), len(l.Bindings), time.Since(start))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchNamespace
}

func BenchmarkListShoots(b *testing.B) {
	testbed.Require(b)
	ns := loadBenchLandscape(b)
	c := newClientB(b, ns)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		stats, err := c.listShoots(context.Background(), func() { n = 0 }, func(hap.Shoot) error { n++; return nil })
		if err != nil {
			b.Fatal(err)
		}
		if n != benchShoots {
			b.Fatalf("listed %d shoots in %d pages, want %d", n, stats.Pages, benchShoots)
		}
	}
	b.ReportMetric(float64(benchShoots), "shoots/op")
}

func newClientB(b *testing.B, ns string) *Client {
	c, err := NewClient(gardenerAPIServer(b).kube.Config(), ns, 0)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkDecodeShootPage decodes one page of shoots as gardener-apiserver
// serves it as JSON (managed fields and all) from memory: the client's
// share of a list from a server without protobuf, apart from the network.
func BenchmarkDecodeShootPage(b *testing.B) {
	testbed.Require(b)
	ns := loadBenchLandscape(b)
	c := newClientB(b, ns)
	body, err := c.shoots.client.Get().Namespace(ns).Resource(c.shoots.name).Param("limit", "500").
		SetHeader("Accept", "application/json").DoRaw(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var p wire.Page[wire.ShootItem]
		if err := wire.ReadPage(wire.JSON, bytes.NewReader(body), &p); err != nil {
			b.Fatal(err)
		}
		if len(p.Items) != 500 {
			b.Fatalf("decoded %d shoots, want 500", len(p.Items))
		}
	}
}
