package differential

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kyma-project/hap-reconciler/internal/db"
	"github.com/kyma-project/hap-reconciler/internal/metrics"
	"github.com/kyma-project/hap-reconciler/test/soak"
	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// servedJob is the built binary's serve, a process of its own, so that its
// memory, goroutines and open files are the job's alone.
type servedJob struct {
	cmd        *exec.Cmd
	metricsURL string
	// store counts the job's tables, through connections of its own,
	// which the connection count leaves out.
	store *db.Store
	mu    sync.Mutex
	lines []string // the last of the job's log lines, for a failure
}

// servedJobName is serve's application_name, by which its connections
// are counted.
const servedJobName = "hap-reconciler-soak"

// jobLogLinesKept bounds the log lines a failure shows.
const jobLogLinesKept = 200

// startServe starts serve on the stream's scene, listening on a free port,
// and waits until it says where; the process is stopped when the test ends.
func startServe(t *testing.T, ctx context.Context, s *stream) *servedJob {
	t.Helper()
	// The test's context kills it should the test hang. Its connections
	// are named apart from the stream's in-process job's (the last
	// --database-url counts).
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, s.sc.Flags()...)
	args = append(args, "--database-url", s.sc.World.DatabaseURL+"&application_name="+servedJobName)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	job := &servedJob{cmd: cmd}
	listen := make(chan string, 1)
	go job.follow(out, listen)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Logf("serve: %v", err)
		}
	})
	select {
	case addr := <-listen:
		job.metricsURL = "http://" + addr + "/metrics"
	case <-ctx.Done():
		t.Fatalf("serve never said where it listens:\n%s", job.tail())
	}
	store, err := db.Open(ctx, s.sc.World.DatabaseURL+"&application_name=hap-soak", db.Options{Schema: s.sc.Config.Database.Schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	job.store = store
	return job
}

// follow keeps the job's last log lines and sends the address of its
// "serving" line.
func (j *servedJob) follow(out io.Reader, listen chan<- string) {
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var entry struct {
			Msg    string `json:"msg"`
			Listen string `json:"listen"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "serving" {
			listen <- entry.Listen
		}
		j.mu.Lock()
		j.lines = append(j.lines, line)
		if len(j.lines) > jobLogLinesKept {
			j.lines = j.lines[len(j.lines)-jobLogLinesKept:]
		}
		j.mu.Unlock()
	}
}

func (j *servedJob) tail() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var b []byte
	for _, l := range j.lines {
		b = append(append(b, l...), '\n')
	}
	return string(b)
}

// sample is one look at the job: its process's series from /metrics, its
// database connections and every table's rows.
func (j *servedJob) sample(ctx context.Context, s *stream) (soak.Sample, error) {
	at := time.Now()
	values, err := j.processValues(ctx)
	if err != nil {
		return soak.Sample{}, err
	}
	var conns float64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, servedJobName).Scan(&conns); err != nil {
		return soak.Sample{}, fmt.Errorf("count the job's connections: %w", err)
	}
	values[soak.DBConnections] = conns
	rows, err := j.store.TableRows(ctx)
	if err != nil {
		return soak.Sample{}, err
	}
	for table, n := range rows {
		values[soak.TableRowsPrefix+table] = float64(n)
	}
	return soak.Sample{At: at, Values: values}, nil
}

// processValues are the job's process series, as its /metrics shows them.
func (j *servedJob) processValues(ctx context.Context) (map[string]float64, error) {
	families, err := metrics.Scrape(ctx, j.metricsURL)
	if err != nil {
		return nil, err
	}
	values := map[string]float64{}
	for _, name := range soak.ProcessSeries {
		v, ok := gaugeOf(families, name)
		if !ok {
			return nil, fmt.Errorf("/metrics has no %s", name)
		}
		values[name] = v
	}
	return values, nil
}

// lastSuccesses are the jobs' last successes, by job, from /metrics.
func (j *servedJob) lastSuccesses(ctx context.Context) (map[string]time.Time, error) {
	families, err := metrics.Scrape(ctx, j.metricsURL)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for _, f := range families {
		if f.GetName() != "hap_reconciler_job_last_success_timestamp_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "job_name" {
					out[l.GetValue()] = time.Unix(0, int64(m.GetGauge().GetValue()*1e9))
				}
			}
		}
	}
	return out, nil
}

// gaugeOf is the value of an unlabelled gauge.
func gaugeOf(families []*dto.MetricFamily, name string) (float64, bool) {
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// The servers a soak restarts.
const (
	serverKubeAPI     = string(testbed.KubeAPIServer)
	serverGardenerAPI = string(testbed.GardenerAPIServer)
	serverPostgres    = "postgresql"
)

// restart kills one server as a crash would and starts it again, then
// waits until every job of serve has succeeded since it came back.
func (r *soakRun) restart(server string) {
	t := r.t
	t.Helper()
	rs := soak.Restart{Server: server, At: time.Now()}
	t.Logf("+%s: restarting %s", rs.At.Sub(r.started).Round(time.Second), server)
	var err error
	switch server {
	case serverPostgres:
		err = r.s.sc.Bed.Postgres.Restart(r.ctx)
	default:
		api := testbed.APIServer(server)
		if err = r.s.sc.Bed.Kube.KillServer(api); err == nil {
			err = r.s.sc.Bed.Kube.StartServer(r.ctx, api)
		}
	}
	if err != nil {
		t.Fatalf("restart %s: %v", server, err)
	}
	rs.BackAt = time.Now()
	if server == serverPostgres {
		r.s.dropIdleConnections()
	}
	testbed.Eventually(t, 3*time.Minute, "every job to succeed after "+server+" came back", func() (bool, string) {
		last, err := r.job.lastSuccesses(r.ctx)
		if err != nil {
			return false, err.Error()
		}
		for _, job := range soakJobs {
			if last[job].Before(rs.BackAt) {
				return false, fmt.Sprintf("%s last succeeded at %s", job, last[job].Format(time.TimeOnly))
			}
		}
		return true, ""
	})
	rs.RecoveredAt = time.Now()
	r.restarts = append(r.restarts, rs)
}

// dropIdleConnections closes the idle connections of KEB's replicas after
// PostgreSQL restarted under them, as KEB's pool would find them broken.
func (s *stream) dropIdleConnections() {
	for _, db := range s.dbs {
		db.SetMaxIdleConns(0)
		db.SetMaxIdleConns(defaultIdleConns)
	}
}

// defaultIdleConns is database/sql's default of idle connections kept.
const defaultIdleConns = 2
