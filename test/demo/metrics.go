package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveMetrics serves the run's registry on /metrics for as long as the
// demo runs, as `hap-reconciler serve` does.
func serveMetrics(registry *prometheus.Registry, listen string) (url string, stop func() error, err error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", nil, fmt.Errorf("--listen %s: %w", listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
		return err
	}
	return "http://" + ln.Addr().String() + "/metrics", stop, nil
}

// metricsExcerpt scrapes url and keeps the samples a reader of the demo
// can check against the story: the spread GA's bindings, the pools'
// available bindings and the release outcomes.
func metricsExcerpt(ctx context.Context, url string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	var lines []string
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		spread := strings.HasPrefix(line, "keb_") && strings.Contains(line, `"`+spreadGA+`"`)
		if spread || strings.HasPrefix(line, "keb_available_credentials_bindings{") || strings.HasPrefix(line, "hap_reconciler_releases_total{") {
			lines = append(lines, line)
		}
	}
	return lines, scanner.Err()
}
