package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// portAttempts bounds retries when a port picked as free was taken by someone
// else before the server bound it.
const portAttempts = 3

func (k *Kube) startEtcd(ctx context.Context, bin string) error {
	var err error
	for attempt := 0; attempt < portAttempts; attempt++ {
		if err = k.startEtcdOnce(ctx, bin); err == nil || !errors.Is(err, errPortTaken) {
			return err
		}
	}
	return err
}

func (k *Kube) startEtcdOnce(ctx context.Context, bin string) error {
	clientPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	dataDir := filepath.Join(k.dir, "etcd")
	if err := os.RemoveAll(dataDir); err != nil {
		return err
	}
	p, err := startProcess("etcd", filepath.Join(k.dir, "etcd.log"), bin, etcdArgs(dataDir, clientURL, peerURL)...)
	if err != nil {
		return err
	}
	k.etcd = p
	k.etcdURL = clientURL
	return k.waitReady(ctx, p, func(ctx context.Context) (bool, error) {
		return httpOK(ctx, http.DefaultClient, clientURL+"/health")
	})
}

// prepareAPIServer writes the API server's credentials once, so a restart
// after StopServer keeps the identities clients hold.
func (k *Kube) prepareAPIServer(extraArgs []string) error {
	saKey, err := writeServiceAccountKey(k.dir)
	if err != nil {
		return err
	}
	token, tokenFile, err := writeTokenFile(k.dir)
	if err != nil {
		return err
	}
	k.token = token
	k.apiserverArgs = append([]string{
		"--etcd-servers=" + k.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--cert-dir=" + filepath.Join(k.dir, "certs"),
		"--authorization-mode=RBAC",
		"--token-auth-file=" + tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--profiling=false",
		// Serve continue pages from etcd rather than from snapshots of the
		// watch cache, so compacting etcd expires continue tokens the way
		// tests expect (410 Gone), whatever the cache happens to hold.
		"--feature-gates=ListFromCacheSnapshot=false",
	}, extraArgs...)
	return nil
}

// startFirstAPIServer picks the API server's port, which later restarts
// keep so that configs and the kubeconfig stay valid.
func (k *Kube) startFirstAPIServer(ctx context.Context) error {
	baseArgs := k.apiserverArgs
	var err error
	for attempt := 0; attempt < portAttempts; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			return err
		}
		k.apiserverHost = "https://127.0.0.1:" + strconv.Itoa(port)
		k.apiserverArgs = append([]string{"--secure-port=" + strconv.Itoa(port)}, baseArgs...)
		if err = k.startAPIServerLocked(ctx); err == nil || !errors.Is(err, errPortTaken) {
			return err
		}
	}
	return err
}

func (k *Kube) startAPIServerLocked(ctx context.Context) error {
	p, err := startProcess("kube-apiserver", filepath.Join(k.dir, "kube-apiserver.log"), k.apiserverBin, k.apiserverArgs...)
	if err != nil {
		return err
	}
	k.apiserver = p
	certFile := filepath.Join(k.dir, "certs", "apiserver.crt")
	return k.waitReady(ctx, p, func(ctx context.Context) (bool, error) {
		// The server writes its self-signed certificate early in its start;
		// it is read again on every poll, as an early read may catch it
		// half written.
		caPEM, err := os.ReadFile(certFile)
		if err != nil {
			return false, nil
		}
		cfg := adminConfig(k.apiserverHost, k.token, caPEM)
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return false, nil
		}
		ok, err := httpOK(ctx, client, k.apiserverHost+"/readyz")
		if ok {
			k.cfg = cfg
		}
		return ok, err
	})
}

// errPortTaken marks a start that failed because its port was grabbed between
// picking and binding it.
var errPortTaken = errors.New("port already in use")

// waitReady polls ready until it holds, failing fast, with the log tail, when
// the process exits or the ready timeout passes.
func (k *Kube) waitReady(ctx context.Context, p *process, ready func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, k.readyTimeout)
	defer cancel()
	err := pollUntil(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if done, waitErr := p.exited(); done {
			return false, fmt.Errorf("exited: %v", waitErr)
		}
		return ready(ctx)
	})
	if err == nil {
		return nil
	}
	tail := p.logTail()
	_ = p.stop(time.Second)
	err = fmt.Errorf("%s did not become ready: %w\n--- last lines of %s ---\n%s", p.name, err, p.logPath, tail)
	if strings.Contains(tail, "address already in use") {
		return errors.Join(errPortTaken, err)
	}
	return err
}

// httpOK reports whether url answers 200. Connection errors mean "not yet".
func httpOK(ctx context.Context, client *http.Client, url string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
