package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const adminUser = "hap-testbed-admin"

// writeServiceAccountKey writes a fresh signing key for service-account
// tokens. One PEM private key serves both as signing key and, since the public
// half is derived from it, as verification key.
func writeServiceAccountKey(dir string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generate service-account key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("encode service-account key: %w", err)
	}
	path := filepath.Join(dir, "service-account.key")
	data := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write service-account key: %w", err)
	}
	return path, nil
}

// writeTokenFile writes a static token file with one admin user in
// system:masters, which RBAC lets do anything.
func writeTokenFile(dir string) (token, path string, err error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("generate admin token: %w", err)
	}
	token = hex.EncodeToString(raw)
	path = filepath.Join(dir, "tokens.csv")
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", token, adminUser, adminUser)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		return "", "", fmt.Errorf("write token file: %w", err)
	}
	return token, path, nil
}

// adminConfig is the admin's client config. The serving certificate the API
// server generated in its cert dir carries its own CA, so clients verify TLS
// instead of skipping verification.
func adminConfig(host, token string, caPEM []byte) *rest.Config {
	return &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		// The test bed is local and only this process uses it: client-side
		// throttling would only slow fixtures down.
		QPS:   500,
		Burst: 1000,
	}
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	const name = "hap-testbed"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}
