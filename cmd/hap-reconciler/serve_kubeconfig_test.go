package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// A rotated kubeconfig, swapped in the way the kubelet updates a mounted
// Secret (a new version directory, then the ..data symlink replaced), is
// used from serve's next run on, its watch caches included: here it names
// another server (a proxy in front of the API server) and another identity
// (a service account's token). One that does not work leaves Gardener read
// with the one before.
func TestServeReadsGardenerWithARotatedKubeconfigFromItsNextRunOn(t *testing.T) {
	s := load(t, smallLandscape(), plantedConfig)
	ctx := testContext(t)
	mount := newSecretMount(t)
	admin, err := os.ReadFile(bed.Kube.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	mount.update(t, admin)

	var log testbed.SyncBuffer
	g := s.globals(&log)
	g.kubeconfig = mount.kubeconfig()
	srv, err := g.openServer(ctx, dryRunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	if err := srv.WaitForGardener(ctx); err != nil {
		t.Fatal(err)
	}
	queue := &app.JobQueue{Env: srv.Env, Stopping: ctx, JobCtx: ctx}
	runDrift := func(when string) {
		t.Helper()
		queue.Run(jobs.JobDrift, "scheduled")
		families, err := srv.Metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if failed := values(families, "hap_reconciler_job_failures_total", map[string]string{"job_name": jobs.JobDrift})[""]; failed != 0 {
			t.Fatalf("%s: drift failed %v times\n%s", when, failed, log.String())
		}
	}
	runDrift("with the first kubeconfig")

	// The rotated kubeconfig: a service account allowed to read shoots
	// and bindings, through a proxy that notes who asks for what.
	token := serviceAccountToken(t, ctx, s.World.Namespace)
	proxy := newNotingProxy(t)
	mount.update(t, kubeconfigFor(t, proxy.server, token))
	runDrift("after the rotation")
	if !proxy.saw(token, "shoots", false) || !proxy.saw(token, "shoots", true) || !proxy.saw(token, "credentialsbindings", true) {
		t.Fatalf("after the rotation, the proxy saw %v; want lists and watches of shoots and bindings with the service account's token", proxy.requests())
	}
	if !strings.Contains(log.String(), "the kubeconfig changed: Gardener is read with the new one from now on") {
		t.Errorf("the switch is not logged:\n%s", log.String())
	}

	// A kubeconfig whose token the API server refuses: the run goes on
	// with the one before, and the log says why.
	mount.update(t, kubeconfigFor(t, proxy.server, "not-a-valid-token"))
	runDrift("after a broken rotation")
	if !proxy.saw("not-a-valid-token", "shoots", false) {
		t.Errorf("the broken kubeconfig was not tried: the proxy saw %v", proxy.requests())
	}
	if !strings.Contains(log.String(), "reading Gardener with the kubeconfig loaded before") || !strings.Contains(log.String(), "Unauthorized") {
		t.Errorf("the log does not say the new kubeconfig was refused and why:\n%s", log.String())
	}
}

// secretMount is a directory laid out as the kubelet lays out a mounted
// Secret: the file is a symlink through ..data to the current version's
// directory, and an update swaps ..data atomically.
type secretMount struct {
	dir      string
	versions int
}

func newSecretMount(t *testing.T) *secretMount {
	t.Helper()
	m := &secretMount{dir: t.TempDir()}
	if err := os.Symlink(filepath.Join("..data", "kubeconfig"), m.kubeconfig()); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *secretMount) kubeconfig() string { return filepath.Join(m.dir, "kubeconfig") }

func (m *secretMount) update(t *testing.T, content []byte) {
	t.Helper()
	m.versions++
	version := "..2026_11_27_version_" + string(rune('0'+m.versions))
	if err := os.Mkdir(filepath.Join(m.dir, version), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, version, "kubeconfig"), content, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(m.dir, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(m.dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// serviceAccountToken creates a service account that may read shoots and
// bindings in namespace and returns a token of it.
func serviceAccountToken(t *testing.T, ctx context.Context, namespace string) string {
	t.Helper()
	client, err := kubernetes.NewForConfig(bed.Kube.Config())
	if err != nil {
		t.Fatal(err)
	}
	const name = "hap-reconciler-rotated"
	meta := metav1.ObjectMeta{Name: name, Namespace: namespace}
	if _, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"core.gardener.cloud"}, Resources: []string{"shoots"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"security.gardener.cloud"}, Resources: []string{"credentialsbindings"}, Verbs: []string{"get", "list", "watch", "patch"}},
	}}
	if _, err := client.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: meta,
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: namespace}}}
	if _, err := client.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	req, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return req.Status.Token
}

// kubeconfigFor is a kubeconfig for the TLS server with token.
func kubeconfigFor(t *testing.T, server *httptest.Server, token string) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	kc.Clusters["garden"] = &clientcmdapi.Cluster{Server: server.URL, CertificateAuthorityData: ca}
	kc.AuthInfos["rotated"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["garden"] = &clientcmdapi.Context{Cluster: "garden", AuthInfo: "rotated"}
	kc.CurrentContext = "garden"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// notingProxy forwards to the test bed's API server and notes each
// request's token, resource and whether it is a watch.
type notingProxy struct {
	server *httptest.Server
	mu     sync.Mutex
	seen   []proxiedRequest
}

type proxiedRequest struct {
	token, resource string
	watch           bool
}

func newNotingProxy(t *testing.T) *notingProxy {
	t.Helper()
	target, err := url.Parse(bed.Kube.Config().Host)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bed.Kube.Config().CAData) {
		t.Fatal("the test bed's CA does not parse")
	}
	p := &notingProxy{}
	forward := httputil.NewSingleHostReverseProxy(target)
	forward.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	forward.FlushInterval = -1 // watch events go through as they come
	// Watches cut when the test ends are no news.
	forward.ErrorLog = log.New(io.Discard, "", 0)
	p.server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, proxiedRequest{
			token:    strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
			resource: r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:],
			watch:    r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1",
		})
		p.mu.Unlock()
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// The job's watches through the proxy are still open.
		p.server.CloseClientConnections()
		p.server.Close()
	})
	return p
}

func (p *notingProxy) saw(token, resource string, watch bool) bool {
	for _, r := range p.requests() {
		if r.token == token && r.resource == resource && r.watch == watch {
			return true
		}
	}
	return false
}

func (p *notingProxy) requests() []proxiedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxiedRequest(nil), p.seen...)
}
