package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

func TestDemoShowsThePlantedDriftTheSpreadGAsChoiceAndTheWouldRelease(t *testing.T) {
	testbed.Require(t)
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		release string
	}{
		// What `make demo` runs: the API when both API servers are built on
		// this machine (the test bed of the other packages builds them),
		// else the export file.
		{"make demo", nil, nil, "dry run: would release aws-idle-1 of GA ga-idle: no shoot and no active instance since "},
		{"export file", []string{"--gardener", sourceFile}, nil, "dry run: would release aws-idle-1 of GA ga-idle: no shoot and no active instance since "},
		{"DEMO_RELEASE=1", []string{"--gardener", sourceAPI}, map[string]string{"DEMO_RELEASE": "1"}, "released aws-idle-1 of GA ga-idle: no shoot and no active instance since "},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := startDemo(t, func(key string) string { return c.env[key] }, c.args...)
			metrics := d.get(t, d.match(t, `==> Metrics: (\S+)`))
			if !strings.Contains(metrics, `keb_shoots_per_credentials_binding{credentials_binding="aws-spread-1",eu_access="false",global_account_id="ga-spread",hyperscaler_type="aws"} 3`) {
				t.Errorf("the served metrics lack the spread GA's full binding:\n%s", metrics)
			}
			out := d.stop(t)

			drift := map[string]string{}
			for _, line := range section(out, "==> Drift:") {
				kind, bindings, _ := strings.Cut(line, " ")
				drift[kind] = strings.TrimSpace(bindings)
			}
			for kind, binding := range map[string]string{
				"count_mismatch": driftMismatch, "shoot_on_missing_binding": driftGhost,
				"free_binding_in_use": driftFree, "dirty_binding_in_use": driftDirty,
			} {
				if !strings.Contains(drift[kind], binding) {
					t.Errorf("drift %s on %s not shown; drift shown: %v", kind, binding, drift)
				}
			}
			wantChoice := []string{
				"rank 1  aws-spread-2   2 of 3 clusters",
				"rank 2  aws-spread-3   1 of 3 clusters",
				"rank 3  aws-spread-1   3 of 3 clusters, full: not picked any more",
			}
			if got := section(out, "==> Candidates: GA ga-spread holds 3 aws bindings; its next cluster goes to aws-spread-2"); !hasPrefix(got, wantChoice) {
				t.Errorf("the spread GA's choice:\n got %q\nwant %q first", got, wantChoice)
			}
			release := section(out, "==> Release: 1 decision(s)")
			if len(release) != 1 || !strings.HasPrefix(release[0], c.release) {
				t.Errorf("release: %q", release)
			}
			if !strings.Contains(out, "GLOBAL ACCOUNT") || !strings.Contains(out, "Drift on bindings that are no candidates") {
				t.Error("the report table is not printed")
			}
			shadow := section(out, "==> KEB's own picks against the table, as `hap-reconciler report --shadow` prints them")
			if len(shadow) == 0 || !strings.Contains(shadow[0], "KEB made 2 pick(s); the candidate table would have made the same pick in 1 (50.0%). drift: 1.") ||
				!slices.ContainsFunc(shadow, func(l string) bool {
					return strings.Contains(l, "demo-keb-pick-2") && strings.Contains(l, spreadFull) && strings.Contains(l, "drift")
				}) {
				t.Errorf("the shadow comparison of KEB's own picks:\n%s", strings.Join(shadow, "\n"))
			}
			pools := section(out, "==> Pools, as `hap-reconciler pools --live` prints them")
			if !slices.ContainsFunc(pools, regexp.MustCompile(`^pool aws: \d+ free, 2\.0 a day claimed over 8 recorded runs: [0-9.]+ days left$`).MatchString) {
				t.Errorf("the pool view lacks aws's estimate from the recorded runs:\n%s", strings.Join(pools, "\n"))
			}
			if !slices.ContainsFunc(pools, func(l string) bool {
				return strings.HasPrefix(l, `pool gcp_cf-sa30 (shared false): the rules ["gcp(PR=cf-sa30) -> PR"]`)
			}) {
				t.Errorf("the pool view lacks the pool a rule names without a binding:\n%s", strings.Join(pools, "\n"))
			}
			d.assertCleanedUp(t, out)
		})
	}
}

func TestDemoRefusesToReleaseFromAnExport(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--gardener", "file", "--release"}, &out, &errOut, func(string) string { return "" })
	if code != 2 || !strings.Contains(errOut.String(), "--release needs the Gardener API") || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// runningDemo is the demo running in-process, as `make demo` runs it.
type runningDemo struct {
	out    *testbed.SyncBuffer
	cancel context.CancelFunc
	done   chan int
	dbURL  string
}

// startDemo runs the demo until it waits for Ctrl-C.
func startDemo(t *testing.T, getenv func(string) string, args ...string) *runningDemo {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &runningDemo{out: &testbed.SyncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() {
		d.done <- run(ctx, append(args, "--listen", "127.0.0.1:0"), d.out, d.out, getenv)
	}()
	t.Cleanup(func() {
		cancel()
		<-d.done
	})
	deadline := time.After(5 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(d.out.String(), "==> Press Ctrl-C") {
		select {
		case code := <-d.done:
			d.done <- code
			t.Fatalf("the demo ended with exit %d before waiting for Ctrl-C:\n%s", code, d.out.String())
		case <-deadline:
			t.Fatalf("the demo did not get to waiting for Ctrl-C:\n%s", d.out.String())
		case <-tick.C:
		}
	}
	d.dbURL = d.match(t, `database (postgres://\S+)`)
	return d
}

// stop is Ctrl-C: the demo must clean up and exit 0.
func (d *runningDemo) stop(t *testing.T) string {
	t.Helper()
	d.cancel()
	select {
	case code := <-d.done:
		d.done <- code
		if code != 0 {
			t.Errorf("exit %d after Ctrl-C, want 0", code)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the demo did not stop after Ctrl-C:\n%s", d.out.String())
	}
	return d.out.String()
}

func (d *runningDemo) match(t *testing.T, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(d.out.String())
	if m == nil {
		t.Fatalf("no %s in the output:\n%s", pattern, d.out.String())
	}
	return m[1]
}

func (d *runningDemo) get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(body)
}

// assertCleanedUp checks that nothing the demo started is left: its
// directory, its database server, its metrics endpoint.
func (d *runningDemo) assertCleanedUp(t *testing.T, out string) {
	t.Helper()
	if dir := d.match(t, `working directory (\S+)`); !gone(dir) {
		t.Errorf("%s is left behind", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, d.dbURL); err == nil {
		_ = conn.Close(ctx)
		t.Errorf("PostgreSQL at %s still answers", d.dbURL)
	}
	if resp, err := http.Get(d.match(t, `==> Metrics: (\S+)`)); err == nil {
		resp.Body.Close()
		t.Error("the metrics are still served")
	}
	if !strings.Contains(out, "==> Cleaning up") {
		t.Error("the demo does not say it cleaned up")
	}
}

func gone(path string) bool {
	_, err := os.Stat(path)
	return os.IsNotExist(err)
}

// section returns the indented lines that follow the step starting with
// header, trimmed.
func section(out, header string) []string {
	_, rest, found := strings.Cut(out, header)
	if !found {
		return nil
	}
	var lines []string
	for _, line := range strings.Split(rest, "\n")[1:] {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		lines = append(lines, strings.TrimSpace(line))
	}
	return lines
}

func hasPrefix(got, want []string) bool {
	return len(got) >= len(want) && slices.Equal(got[:len(want)], want)
}
