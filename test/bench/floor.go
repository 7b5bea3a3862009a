package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// Floor is the least any job could spend on its inputs: every page of shoots
// and bindings fetched and thrown away undecoded, and KEB's table scanned by
// one aggregate, the three at once as a run gathers them. The pages are
// asked for in one format: the one the job asks for first (protobuf, which
// gardener-apiserver serves and a kube-apiserver serving the kinds as custom
// resources answers with JSON), or JSON.
type Floor struct {
	// Format is the content type the shoots' pages came in.
	Format       string  `json:"format"`
	Wall         Seconds `json:"wallSeconds"`
	Shoots       Fetch   `json:"shoots"`
	Bindings     Fetch   `json:"bindings"`
	CountQuery   Seconds `json:"countQuerySeconds"`
	CountedGroup int     `json:"countedGroups"`
}

// Fetch is what fetching one kind's pages cost.
type Fetch struct {
	Format  string  `json:"format"`
	Seconds Seconds `json:"seconds"`
	Pages   int     `json:"pages"`
	Bytes   int64   `json:"bytes"`
}

// floorCountSQL is the smallest question KEB's table must answer for the
// job: active instances per binding. It scans the whole table, as the job's
// aggregate does, but builds nothing but the counts.
const floorCountSQL = `SELECT subscription_secret_name, count(*) FROM instances
WHERE deleted_at = '0001-01-01 00:00:00+00' GROUP BY 1`

// Accept headers of the floor's two formats: the job's own (protobuf first)
// and JSON alone.
const (
	acceptPreferred = runtime.ContentTypeProtobuf + ", " + runtime.ContentTypeJSON
	acceptJSON      = runtime.ContentTypeJSON
)

// measureFloor fetches the namespace's shoots and bindings page by page with
// plain GETs asking for accept, and runs the aggregate, all three at once.
func measureFloor(ctx context.Context, cfg *rest.Config, namespace, databaseURL string, pageSize int64, accept string) (Floor, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return Floor{}, fmt.Errorf("floor: http client: %w", err)
	}
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return Floor{}, fmt.Errorf("floor: connect: %w", err)
	}
	defer conn.Close(context.Background())
	// Connecting is not part of the floor: the run's pool connects before
	// it counts too, and its startup is measured apart.
	if err := conn.Ping(ctx); err != nil {
		return Floor{}, fmt.Errorf("floor: ping: %w", err)
	}

	var f Floor
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	fetchBoth(gctx, g, httpClient, cfg.Host, namespace, pageSize, accept, consistentRead, &f.Shoots, &f.Bindings)
	g.Go(func() error {
		t := time.Now()
		rows, err := conn.Query(gctx, floorCountSQL)
		if err != nil {
			return fmt.Errorf("floor: count query: %w", err)
		}
		for rows.Next() {
			f.CountedGroup++
		}
		rows.Close()
		f.CountQuery = since(t)
		if err := rows.Err(); err != nil {
			return fmt.Errorf("floor: count query: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return Floor{}, err
	}
	f.Wall = since(start)
	f.Format = f.Shoots.Format
	return f, nil
}

// The reads a list can ask for: a consistent one, as run and serve's first
// fill do, or one the API server may answer from its watch cache
// (resourceVersion=0), which can lag the newest writes.
const (
	consistentRead = ""
	cachedRead     = "0"
)

// fetchBoth fetches the namespace's shoots and bindings in g, at once, as
// the job reads them.
func fetchBoth(ctx context.Context, g *errgroup.Group, client *http.Client, host, namespace string, pageSize int64, accept, read string, shoots, bindings *Fetch) {
	g.Go(func() (err error) {
		*shoots, err = fetchPages(ctx, client, host, "/apis/core.gardener.cloud/v1beta1/namespaces/"+namespace+"/shoots", pageSize, accept, read)
		return err
	})
	g.Go(func() (err error) {
		*bindings, err = fetchPages(ctx, client, host, "/apis/security.gardener.cloud/v1alpha1/namespaces/"+namespace+"/credentialsbindings", pageSize, accept, read)
		return err
	})
}

// fetchPages GETs every page of a list and keeps nothing but the continue
// token: the cost of moving the bytes, with no decoding on this side. read
// goes with the first page only: a continue token carries its own version.
func fetchPages(ctx context.Context, client *http.Client, host, path string, pageSize int64, accept, read string) (Fetch, error) {
	var f Fetch
	var body bytes.Buffer
	start := time.Now()
	token := ""
	for {
		q := url.Values{"limit": {strconv.FormatInt(pageSize, 10)}}
		switch {
		case token != "":
			q.Set("continue", token)
		case read != consistentRead:
			q.Set("resourceVersion", read)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+path+"?"+q.Encode(), nil)
		if err != nil {
			return f, err
		}
		// Go's transport asks for gzip and unpacks it, as client-go's does.
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			return f, fmt.Errorf("floor: GET %s: %w", path, err)
		}
		body.Reset()
		_, err = body.ReadFrom(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return f, fmt.Errorf("floor: read %s: %w", path, err)
		}
		if resp.StatusCode != http.StatusOK {
			return f, fmt.Errorf("floor: GET %s: %s: %s", path, resp.Status, truncate(body.Bytes(), 300))
		}
		f.Pages++
		f.Bytes += int64(body.Len())
		f.Format = resp.Header.Get("Content-Type")
		token, err = continueToken(f.Format, body.Bytes())
		if err != nil {
			return f, fmt.Errorf("floor: %s page %d: %w", path, f.Pages, err)
		}
		if token == "" {
			f.Seconds = since(start)
			return f, nil
		}
	}
}

// continueToken finds the list's continue token without decoding the page's
// items, in either format.
func continueToken(contentType string, page []byte) (string, error) {
	if strings.HasPrefix(contentType, runtime.ContentTypeProtobuf) {
		return protobufContinue(page)
	}
	return jsonContinue(page)
}

// jsonContinue finds the token in a JSON list. gardener-apiserver writes the
// list's metadata before its items; kube-apiserver writes a custom
// resource list's members in key order, the metadata after every item. A
// token holds only URL-safe base64, so it needs no unescaping.
func jsonContinue(page []byte) (string, error) {
	meta := page[:min(len(page), 4096)]
	if i := bytes.Index(meta, []byte(`"items":`)); i >= 0 {
		meta = meta[:i]
	}
	at := bytes.Index(meta, []byte(`"metadata":{`))
	if at < 0 {
		meta = page[max(0, len(page)-4096):]
		if at = bytes.LastIndex(meta, []byte(`"metadata":{`)); at < 0 {
			return "", errors.New("no list metadata in the page")
		}
	}
	meta = meta[at:]
	const key = `"continue":"`
	i := bytes.Index(meta, []byte(key))
	if i < 0 {
		return "", nil
	}
	rest := meta[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", errors.New("unterminated continue token")
	}
	return string(rest[:end]), nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
