package testbed

import (
	"crypto/x509"
	"os"
	"path/filepath"
)

// frontProxyArgs writes the aggregation layer's front-proxy credentials and
// returns the kube-apiserver flags that use them. kube-apiserver proxies a
// request for an aggregated API (gardener-apiserver's groups) with this
// client certificate and the caller's identity in X-Remote-* headers; the
// aggregated server trusts those headers because kube-apiserver publishes the
// CA in kube-system/extension-apiserver-authentication, which the aggregated
// server reads through its delegated authentication.
func frontProxyArgs(dir string) ([]string, error) {
	certDir := filepath.Join(dir, "front-proxy")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	ca, err := newCertAuthority("hap-testbed-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	caPath := filepath.Join(certDir, "ca.crt")
	if err := os.WriteFile(caPath, ca.pem, 0o600); err != nil {
		return nil, err
	}
	client, err := ca.issue("front-proxy-client", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	certPath, keyPath, err := client.write(certDir, "client")
	if err != nil {
		return nil, err
	}
	return []string{
		"--requestheader-client-ca-file=" + caPath,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-allowed-names=front-proxy-client",
		"--proxy-client-cert-file=" + certPath,
		"--proxy-client-key-file=" + keyPath,
	}, nil
}
