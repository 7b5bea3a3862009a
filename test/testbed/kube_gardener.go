package testbed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// The aggregation layer reaches gardener-apiserver through this Service, an
// ExternalName pointing at localhost: the test bed runs no cluster network.
// The serving certificate names the Service, as kube-apiserver verifies it
// by the Service's DNS name.
const (
	gardenerServiceNamespace = metav1.NamespaceSystem
	gardenerServiceName      = "gardener-apiserver"
)

// gardenerAPIGroupVersions are the group-versions registered with the
// aggregation layer: the two the job reads (Shoots and Projects and
// CloudProfiles in core, CredentialsBindings in security).
var gardenerAPIGroupVersions = []schema.GroupVersion{
	{Group: "core.gardener.cloud", Version: "v1beta1"},
	{Group: "security.gardener.cloud", Version: "v1alpha1"},
}

// disabledGardenerAdmission lists the admission plugins the test bed turns
// off; every other default plugin stays on. ExtensionValidator admits a shoot
// only when a ControllerRegistration exists for each extension type it names
// (provider, networking, DNS, every spec.extensions entry), which a
// landscape without gardener-controller-manager and extensions never has.
// DeletionConfirmation refuses to delete a shoot or project without the
// confirmation annotation; tests delete freely, as Gardener's own test
// environment does.
var disabledGardenerAdmission = []string{"ExtensionValidator", "DeletionConfirmation"}

var apiServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// gardenerServer is the gardener-apiserver process of a test bed whose
// kinds come from it.
type gardenerServer struct {
	bin   string
	args  []string
	port  int
	host  string
	caPEM []byte
	proc  *process
}

// prepareGardenerAPIServer writes gardener-apiserver's serving certificate
// and command line. It stores into the test bed's etcd, like Gardener's own
// test environment, and delegates authentication and authorization to
// kube-apiserver through the admin kubeconfig.
func (k *Kube) prepareGardenerAPIServer(bin string) error {
	certDir := filepath.Join(k.dir, "gardener-apiserver")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	ca, err := newCertAuthority("hap-testbed-gardener-apiserver-ca")
	if err != nil {
		return err
	}
	serving, err := ca.issue("gardener-apiserver", x509.ExtKeyUsageServerAuth,
		"localhost", "127.0.0.1", gardenerServiceName+"."+gardenerServiceNamespace+".svc")
	if err != nil {
		return err
	}
	certPath, keyPath, err := serving.write(certDir, "serving")
	if err != nil {
		return err
	}
	k.gardener = &gardenerServer{bin: bin, caPEM: ca.pem, args: []string{
		"--etcd-servers=" + k.etcdURL,
		"--bind-address=127.0.0.1",
		"--tls-cert-file=" + certPath,
		"--tls-private-key-file=" + keyPath,
		"--cluster-identity=hap-testbed",
		"--authentication-kubeconfig=" + k.kubeconfigPath,
		"--authorization-kubeconfig=" + k.kubeconfigPath,
		"--kubeconfig=" + k.kubeconfigPath,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez",
		"--disable-admission-plugins=" + strings.Join(disabledGardenerAdmission, ","),
		"--profiling=false",
	}}
	k.gardener.args = append(k.gardener.args, k.gardenerArgs...)
	return nil
}

// startGardenerAPIServer starts gardener-apiserver on a free port and waits
// until it is ready, then points kube-apiserver's aggregation layer at it
// and waits until both kinds the job reads list through kube-apiserver.
//
// A restart takes a new port, as a new pod behind the Service would: the
// aggregation layer sends nothing to it before it is ready. On the old port
// a server still starting would be sent requests before its delegated
// authentication is loaded and would refuse them as system:anonymous (403),
// which production's readiness-gated endpoints never show a client.
func (k *Kube) startGardenerAPIServer(ctx context.Context) error {
	g := k.gardener
	var err error
	for attempt := 0; attempt < portAttempts; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			return err
		}
		g.port, g.host = port, "https://127.0.0.1:"+strconv.Itoa(port)
		if err = k.runGardenerAPIServer(ctx); err == nil || !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := k.configureGardenNamespace(ctx); err != nil {
		return err
	}
	return k.registerGardenerAPIs(ctx)
}

// Gardener's own namespace, where an installation keeps its configuration.
const gardenNamespace = "garden"

// configureGardenNamespace creates the configuration a Gardener installation
// keeps in its garden namespace that admission reads: the managed service
// account issuer, which KEB's shoots ask for (annotation
// authentication.gardener.cloud/issuer: managed) and which admission refuses
// when the installation does not offer it.
func (k *Kube) configureGardenNamespace(ctx context.Context) error {
	core, err := kubernetes.NewForConfig(k.cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gardenNamespace}}
	if _, err := core.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", gardenNamespace, err)
	}
	issuer := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "shoot-service-account-issuer",
			Labels: map[string]string{"gardener.cloud/role": "shoot-service-account-issuer"},
		},
		StringData: map[string]string{"hostname": "discovery.ingress.garden.kyma.ondemand.com"},
	}
	if _, err := core.CoreV1().Secrets(gardenNamespace).Create(ctx, issuer, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the service account issuer secret: %w", err)
	}
	return nil
}

func (k *Kube) runGardenerAPIServer(ctx context.Context) error {
	g := k.gardener
	args := append([]string{"--secure-port=" + strconv.Itoa(g.port)}, g.args...)
	p, err := startProcess("gardener-apiserver", filepath.Join(k.dir, "gardener-apiserver.log"), g.bin, args...)
	if err != nil {
		return err
	}
	g.proc = p
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(g.caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return k.waitReady(ctx, p, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, client, g.host+"/readyz")
	})
}

// registerGardenerAPIs creates the Service and one APIService per
// group-version, or points the APIServices at the server's new port after
// a restart, then waits until clients can use them.
func (k *Kube) registerGardenerAPIs(ctx context.Context) error {
	core, err := kubernetes.NewForConfig(k.cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(k.cfg)
	if err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: gardenerServiceName, Namespace: gardenerServiceNamespace},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	if _, err := core.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	for _, gv := range gardenerAPIGroupVersions {
		want := k.gardener.apiService(gv)
		_, err := dyn.Resource(apiServicesResource).Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				got, err := dyn.Resource(apiServicesResource).Get(ctx, want.GetName(), metav1.GetOptions{})
				if err != nil {
					return err
				}
				want.SetResourceVersion(got.GetResourceVersion())
				_, err = dyn.Resource(apiServicesResource).Update(ctx, want, metav1.UpdateOptions{})
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("register APIService for %s: %w", gv, err)
		}
	}
	return k.waitGardenerKindsServed(ctx)
}

// waitGardenerKindsServed waits for what a client needs: every APIService
// Available, and a list of Shoots and of CredentialsBindings answering
// through kube-apiserver (Available alone has been seen to come before the
// aggregated server reads its storage, and to lag behind a restart of
// either server).
func (k *Kube) waitGardenerKindsServed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, k.readyTimeout)
	defer cancel()
	dyn, err := dynamic.NewForConfig(k.cfg)
	if err != nil {
		return err
	}
	err = pollUntil(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if done, waitErr := k.gardener.proc.exited(); done {
			return false, fmt.Errorf("gardener-apiserver exited: %v", waitErr)
		}
		for _, gv := range gardenerAPIGroupVersions {
			got, err := dyn.Resource(apiServicesResource).Get(ctx, apiServiceName(gv), metav1.GetOptions{})
			if err != nil || !apiServiceAvailable(got) {
				return false, nil
			}
		}
		for _, gvr := range []schema.GroupVersionResource{ShootsResource, CredentialsBindingsResource} {
			if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("gardener-apiserver's APIs not served through kube-apiserver: %w\n--- last lines of %s ---\n%s",
			err, k.gardener.proc.logPath, k.gardener.proc.logTail())
	}
	return nil
}

func (g *gardenerServer) apiService(gv schema.GroupVersion) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": apiServiceName(gv)},
		"spec": map[string]any{
			"group":                gv.Group,
			"version":              gv.Version,
			"groupPriorityMinimum": int64(100),
			"versionPriority":      int64(100),
			"caBundle":             base64.StdEncoding.EncodeToString(g.caPEM),
			"service": map[string]any{
				"namespace": gardenerServiceNamespace,
				"name":      gardenerServiceName,
				"port":      int64(g.port),
			},
		},
	}}
}

func apiServiceName(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

func apiServiceAvailable(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" && m["status"] == "True" {
			return true
		}
	}
	return false
}
