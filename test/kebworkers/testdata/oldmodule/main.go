// Command oldmodule is one KEB replica on an older pin of the provisioning
// module: the upgrade tests build it against the module of an earlier
// commit (test/kebworkers' OldModuleBinary) and ask it, one JSON line on
// stdin at a time, what KEB's resolve step asks the module;
// each answer is one JSON line on stdout. It uses only what that module
// exports and the standard library, with KEB's driver (lib/pq), so that it
// compiles against the module as it was, not as it is.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	_ "github.com/lib/pq" // KEB's driver

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// ask is one call of KEB's resolve step: a pick, the record of a claim, or
// the abandon of one. Request is the request as this tree's module names
// its fields, which this module's Request shares.
type ask struct {
	Op      string // pick, record, abandon
	Request provisioning.Request
	Binding string // record: the binding KEB claimed
}

// answer is the module's answer to an ask, with what KEB reads of its error.
type answer struct {
	Binding      string `json:"binding,omitempty"`
	ClaimNew     bool   `json:"claimNew,omitempty"`
	Err          string `json:"error,omitempty"`
	LivePath     bool   `json:"livePath,omitempty"`
	ClaimPending bool   `json:"claimPending,omitempty"`
	RetryAfterNs int64  `json:"retryAfterNs,omitempty"`
	Guarded      bool   `json:"guarded,omitempty"`
}

func main() {
	dsn := flag.String("database-url", "", "KEB's database")
	server := flag.String("server", "", "the API server serving Gardener's kinds")
	caFile := flag.String("ca", "", "the API server's CA bundle")
	namespace := flag.String("namespace", "", "KEB's Gardener project namespace")
	flag.Parse()
	if err := run(*dsn, *server, *caFile, *namespace, os.Getenv("OLDMODULE_TOKEN")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dsn, server, caFile, namespace, token string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	g, err := newGardener(server, caFile, namespace, token)
	if err != nil {
		return err
	}
	client := &provisioning.Client{DB: db, Gardener: g, Timeout: 30 * time.Second}
	defer client.Close()
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var a ask
		if err := json.Unmarshal(in.Bytes(), &a); err != nil {
			return fmt.Errorf("read an ask: %w", err)
		}
		if err := out.Encode(serve(client, a)); err != nil {
			return err
		}
	}
	return in.Err()
}

func serve(client *provisioning.Client, a ask) answer {
	ctx := context.Background()
	req := a.Request
	switch a.Op {
	case "pick":
		pick, err := client.NextBinding(ctx, req)
		return answerOf(pick.Binding, pick.ClaimNew, err)
	case "record":
		var limit *int
		if req.Account != nil {
			limit = &req.Account.Limit
		}
		return answerOf("", false, client.RecordClaim(ctx, provisioning.Claim{Request: req, BindingName: a.Binding, Limit: limit}))
	case "abandon":
		return answerOf("", false, client.AbandonClaim(ctx, req))
	}
	return answer{Err: fmt.Sprintf("unknown op %q", a.Op)}
}

func answerOf(binding string, claimNew bool, err error) answer {
	a := answer{Binding: binding, ClaimNew: claimNew}
	if err == nil {
		return a
	}
	a.Err, a.LivePath = err.Error(), provisioning.LivePath(err)
	a.Guarded = errors.Is(err, provisioning.ErrGuarded)
	var pending *provisioning.ClaimPendingError
	if errors.As(err, &pending) {
		a.ClaimPending, a.RetryAfterNs = true, int64(pending.RetryAfter)
	}
	return a
}

// gardener is KEB's Gardener client on its namespace, as far as the module
// calls it: one binding by name, the bindings a label selector selects.
type gardener struct {
	http      *http.Client
	base      string
	token     string
	namespace string
}

func newGardener(server, caFile, namespace, token string) (*gardener, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	return &gardener{http: &http.Client{Transport: transport, Timeout: 10 * time.Second},
		base:  server + "/apis/security.gardener.cloud/v1alpha1/namespaces/" + url.PathEscape(namespace) + "/credentialsbindings",
		token: token, namespace: namespace}, nil
}

type object struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Provider struct {
		Type string `json:"type"`
	} `json:"provider"`
}

func (o object) binding() provisioning.Binding {
	return provisioning.Binding{Name: o.Metadata.Name, Labels: o.Metadata.Labels, ProviderType: o.Provider.Type}
}

func (g *gardener) get(ctx context.Context, u string, into any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Accept", "application/json")
	resp, err := g.http.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return false, err
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("GET %s: %s: %s", u, resp.Status, body)
	}
	return true, json.Unmarshal(body, into)
}

func (g *gardener) CredentialsBinding(ctx context.Context, name string) (provisioning.Binding, bool, error) {
	var o object
	found, err := g.get(ctx, g.base+"/"+url.PathEscape(name), &o)
	if err != nil || !found {
		return provisioning.Binding{}, false, err
	}
	return o.binding(), true, nil
}

func (g *gardener) CredentialsBindings(ctx context.Context, selector string) ([]provisioning.Binding, error) {
	var list struct {
		Items []object `json:"items"`
	}
	if _, err := g.get(ctx, g.base+"?labelSelector="+url.QueryEscape(selector), &list); err != nil {
		return nil, err
	}
	out := make([]provisioning.Binding, len(list.Items))
	for i, o := range list.Items {
		out[i] = o.binding()
	}
	return out, nil
}
