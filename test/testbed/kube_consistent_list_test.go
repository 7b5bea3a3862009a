package testbed

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
)

// minWatchProgressEtcd is the first etcd 3.5 whose RequestWatchProgress the
// API servers trust (etcd-io/etcd#17507): from it on, they confirm their watch
// cache is current and serve consistent lists from it instead of from etcd.
var minWatchProgressEtcd = version.MustParseSemantic("3.5.13")

// consistentReadsFromCache is the kube-apiserver counter of consistent lists
// its watch cache served itself, without falling back to etcd.
const consistentReadsFromCache = "apiserver_watch_cache_consistent_read_total"

// The bed runs etcd 3.5, as production Gardener does, so a consistent list
// (resourceVersion "" with a limit) is served from kube-apiserver's watch
// cache; on Debian's etcd 3.4 every such list went to etcd.
func TestConsistentListIsServedFromTheWatchCache(t *testing.T) {
	k := KubeForTest(t, WithGardenerKinds(NoGardenerKinds))
	ctx := Context(t, 5*time.Minute)

	if v := etcdVersion(ctx, t, k.EtcdURL()); v.LessThan(minWatchProgressEtcd) {
		t.Fatalf("the bed's etcd is %s, want at least %s", v, minWatchProgressEtcd)
	}

	client, err := kubernetes.NewForConfig(k.Config())
	if err != nil {
		t.Fatal(err)
	}
	// kube-apiserver learns etcd's version, and fills the namespaces' watch
	// cache, in the background after it reports ready; until then it sends
	// consistent lists to etcd without counting them. So list until one is
	// counted, which with etcd 3.4 never happens: the test's context ends it.
	for lists := 1; ; lists++ {
		before := fromCacheCount(ctx, t, client, "namespaces")
		err := client.CoreV1().RESTClient().Get().Resource("namespaces").Param("limit", "1").Do(ctx).Error()
		if err != nil {
			t.Fatalf("consistent list of namespaces: %v", err)
		}
		if fromCacheCount(ctx, t, client, "namespaces") > before {
			t.Logf("list %d was served from the watch cache", lists)
			return
		}
	}
}

// etcdVersion is the server version etcd reports in its status.
func etcdVersion(ctx context.Context, t *testing.T, etcdURL string) *version.Version {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	status, err := client.Status(ctx, etcdURL)
	if err != nil {
		t.Fatalf("etcd status: %v", err)
	}
	v, err := version.ParseSemantic(status.Version)
	if err != nil {
		t.Fatalf("etcd version %q: %v", status.Version, err)
	}
	return v
}

// fromCacheCount reads, from kube-apiserver's metrics, how many consistent
// lists of the core resource its watch cache served without falling back.
func fromCacheCount(ctx context.Context, t *testing.T, client kubernetes.Interface, resource string) float64 {
	t.Helper()
	page, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("scrape kube-apiserver metrics: %v", err)
	}
	// The text format sorts labels by name.
	series := consistentReadsFromCache + `{fallback="false",group="",resource="` + resource + `",success="true"} `
	for _, line := range strings.Split(string(page), "\n") {
		if value, ok := strings.CutPrefix(line, series); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", series, err)
			}
			return v
		}
	}
	return 0 // not yet counted once
}
