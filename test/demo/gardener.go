package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/gardener/exportfile"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/test/landscape"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// Where the demo's Gardener comes from.
const (
	sourceAuto = "auto"
	sourceAPI  = "api"  // a local kube-apiserver with gardener-apiserver behind it
	sourceFile = "file" // an export file, read as --gardener-file reads it
)

// exportNamespace is the project namespace of the export file.
const exportNamespace = "garden-kyma-demo"

// gardenerSource is the demo's Gardener: a running API or an export.
type gardenerSource struct {
	namespace string
	// restConfig and kubeconfig reach the API; nil and "" for an export.
	restConfig *rest.Config
	kubeconfig string
	// file and port read the export; "" and nil for the API.
	file string
	port jobs.Gardener
}

// chooseSource resolves auto: the API when kube-apiserver and
// gardener-apiserver are built on this machine, which the test bed's build
// scripts tell without building them; otherwise the export file, since
// building takes about twenty minutes.
func chooseSource(want string, getenv func(string) string) (source, why string) {
	if want != sourceAuto {
		return want, "as asked with --gardener " + want
	}
	kube, kubeOK := binary(getenv, "HAP_KUBE_APISERVER", "build-kube-apiserver.sh")
	gardenerAPI, gardenerOK := binary(getenv, "HAP_GARDENER_APISERVER", "build-gardener-apiserver.sh")
	if kubeOK && gardenerOK {
		return sourceAPI, fmt.Sprintf("kube-apiserver (%s) and gardener-apiserver (%s) are built on this machine", kube, gardenerAPI)
	}
	return sourceFile, "kube-apiserver and gardener-apiserver are not both built on this machine yet (about 20 minutes on 2 cores: " +
		"`make kube-apiserver gardener-apiserver`, or run the demo with --gardener api to build them now), so Gardener is read from " +
		"an export file of the landscape, exactly as `hap-reconciler --gardener-file` reads one"
}

// binary is the path the environment variable names, else the binary the
// build script has cached: the script is the one place that knows where,
// and is asked without letting it build.
func binary(getenv func(string) string, env, script string) (string, bool) {
	if path := getenv(env); path != "" {
		return path, true
	}
	path, ok := findUp(filepath.Join("hack", script))
	if !ok {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", path, "--cached").Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// findUp looks for rel in the working directory and its parents: make
// runs the demo at the repository's root, go test in cmd/hap-demo.
func findUp(rel string) (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		path := filepath.Join(dir, rel)
		if _, err := os.Stat(path); err == nil {
			return path, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// startAPI starts etcd, kube-apiserver and gardener-apiserver (building
// each first when the machine has none) and seeds the
// landscape into a new namespace through Gardener's admission.
func startAPI(ctx context.Context, n narrator, c *cleanups, l *landscape.Landscape, getenv func(string) string) (gardenerSource, error) {
	n.step("Starting a Gardener API: etcd, kube-apiserver and Gardener's own gardener-apiserver serving Shoots and CredentialsBindings")
	if _, cached := binary(getenv, "HAP_ETCD", "build-etcd.sh"); !cached {
		n.note("building etcd 3.5 from source first (once per machine, about 80 s of CPU time)")
	}
	if _, cached := binary(getenv, "HAP_KUBE_APISERVER", "build-kube-apiserver.sh"); !cached {
		n.note("building kube-apiserver from source first (once per machine, about 6 minutes on 2 cores)")
	}
	if _, cached := binary(getenv, "HAP_GARDENER_APISERVER", "build-gardener-apiserver.sh"); !cached {
		n.note("building gardener-apiserver from source first (once per machine, about 13 minutes on 2 cores)")
	}
	stop := n.ticking("starting the Gardener API")
	kube, err := testbed.StartKube(ctx)
	stop()
	if err != nil {
		return gardenerSource{}, fmt.Errorf("starting the Gardener API: %w", err)
	}
	c.add("stopped gardener-apiserver, kube-apiserver and etcd and removed their data", kube.Stop)
	n.note("kube-apiserver at %s", kube.Config().Host)

	ns, err := kube.NewNamespace(ctx, exportNamespace)
	if err != nil {
		return gardenerSource{}, err
	}
	n.step("Seeding Gardener: %d credentials bindings and %d shoots into namespace %s", len(l.Bindings), len(l.Shoots), ns)
	if err := landscape.LoadGardenerAPIServer(ctx, kube.Config(), ns, l, n.counter("created")); err != nil {
		return gardenerSource{}, err
	}
	return gardenerSource{namespace: ns, restConfig: kube.Config(), kubeconfig: kube.KubeconfigPath()}, nil
}

// openExport writes the landscape as kubectl would export it and opens it
// as the file source.
func openExport(n narrator, l *landscape.Landscape, dir string) (gardenerSource, error) {
	path := filepath.Join(dir, "gardener-export.json")
	n.step("Writing Gardener as an export: %d credentials bindings and %d shoots to %s", len(l.Bindings), len(l.Shoots), path)
	if err := writeExport(path, exportNamespace, l); err != nil {
		return gardenerSource{}, err
	}
	files, err := exportfile.Open(exportNamespace, path)
	if err != nil {
		return gardenerSource{}, err
	}
	return gardenerSource{namespace: exportNamespace, file: path, port: files}, nil
}

// writeExport writes what `kubectl get shoots,credentialsbindings -n
// namespace -o json` would print had the landscape been loaded there.
func writeExport(path, namespace string, l *landscape.Landscape) (err error) {
	items := make([]any, 0, len(l.Bindings)+len(l.Shoots))
	for _, b := range l.Bindings {
		b = b.DeepCopy()
		b.Namespace, b.CredentialsRef.Namespace = namespace, namespace
		items = append(items, b)
	}
	for _, s := range l.Shoots {
		shoot := s.Object.DeepCopy()
		shoot.Namespace = namespace
		if s.Deleting {
			// As the API shows a shoot that was deleted while Gardener's
			// finalizer keeps it.
			shoot.DeletionTimestamp = &metav1.Time{Time: time.Now().UTC().Truncate(time.Second)}
			shoot.Finalizers = append(shoot.Finalizers, "gardener")
		}
		items = append(items, shoot)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	enc := json.NewEncoder(f)
	enc.SetIndent("", "    ")
	if err := enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}); err != nil {
		return fmt.Errorf("write export %s: %w", path, err)
	}
	return nil
}
