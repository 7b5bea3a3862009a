package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RunFigures is one `hap-reconciler run` (all jobs, release in dry-run),
// measured from outside as a child process so CPU time (its rusage) and
// peak RSS (its VmHWM) are the job's alone.
type RunFigures struct {
	Wall     Seconds `json:"wallSeconds"`
	User     Seconds `json:"userSeconds"`
	System   Seconds `json:"systemSeconds"`
	CPU      Seconds `json:"cpuSeconds"`
	MaxRSSMB float64 `json:"maxRSSMB"`
	// Heap figures from the Go runtime's GC trace: the largest heap any
	// collection started at, and the most it found still live. Peak RSS is
	// the first plus the binary and the runtime; GOGC lets the heap grow
	// to twice what was live before collecting.
	PeakHeapMB int    `json:"peakHeapMB"`
	MaxLiveMB  int    `json:"maxLiveHeapMB"`
	Phases     Phases `json:"phases"`
	// ServerCPU is the CPU time etcd and the API servers spent while the
	// run went on: the serving side of its reads and writes.
	ServerCPU Seconds `json:"serverCPUSeconds"`
}

// clusterLimit is the clusters per binding both the job and KEB's live path
// allow: high enough that the picks measured after the runs still find room.
const clusterLimit = 200

// runConfig is the configuration every measured run and cycle uses: every
// GA may hold several accounts.
var runConfig = fmt.Sprintf(`hap:
  multiHyperscalerAccount:
    allowedGlobalAccounts: ["*"]
    limits: {default: %d}
`, clusterLimit)

// runner starts the real hap-reconciler binary against one world.
type runner struct {
	binary     string
	kubeconfig string
	namespace  string
	dbURL      string
	configPath string
}

func newRunner(dir, binary, kubeconfig, namespace, dbURL string) (*runner, error) {
	path := filepath.Join(dir, "config-"+namespace+".yaml")
	if err := os.WriteFile(path, []byte(runConfig), 0o600); err != nil {
		return nil, fmt.Errorf("write run config: %w", err)
	}
	return &runner{binary: binary, kubeconfig: kubeconfig, namespace: namespace, dbURL: dbURL, configPath: path}, nil
}

// rewriteCandidates runs the candidates job alone, which rewrites the
// candidate table from a new snapshot; nothing of it is measured.
func (r *runner) rewriteCandidates(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, r.binary, "run", "--jobs", "candidates",
		"--config", r.configPath, "--namespace", r.namespace,
		"--kubeconfig", r.kubeconfig, "--database-url", r.dbURL, "--log-level", "warn")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hap-reconciler run --jobs candidates: %w\n%s", err, tailLines(string(out), 20))
	}
	return nil
}

// run executes one `run --release-dry-run` (the candidate table is written,
// no binding is released) and reads its rusage and phase logs.
func (r *runner) run(ctx context.Context) (RunFigures, error) {
	cmd := exec.CommandContext(ctx, r.binary, "run", "--release-dry-run",
		"--config", r.configPath, "--namespace", r.namespace,
		"--kubeconfig", r.kubeconfig, "--database-url", r.dbURL,
		// Debug adds the "decided" line each job logs between deciding
		// and acting, which splits decide from write.
		"--log-level", "debug")
	// The run logs on stdout; the runtime's GC trace goes to stderr.
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Nothing of the benchmark's environment may point the child
	// elsewhere: the flags say everything.
	// The GC trace only adds a line to stderr per collection.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GODEBUG=gctrace=1"}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return RunFigures{}, fmt.Errorf("hap-reconciler run: %w", err)
	}
	done := make(chan struct{})
	peak := samplePeakRSS(cmd.Process.Pid, done)
	err := cmd.Wait()
	end := time.Now()
	close(done)
	peakKB := <-peak
	if err != nil {
		return RunFigures{}, fmt.Errorf("hap-reconciler run: %w\n%s", err, tailLines(stdout.String()+stderr.String(), 20))
	}
	usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return RunFigures{}, fmt.Errorf("hap-reconciler run: no rusage on this platform")
	}
	phases, err := parsePhases(stdout.Bytes(), start, end)
	if err != nil {
		return RunFigures{}, fmt.Errorf("hap-reconciler run: %w", err)
	}
	f := RunFigures{
		Wall:     Seconds(end.Sub(start).Seconds()),
		User:     timeval(usage.Utime),
		System:   timeval(usage.Stime),
		MaxRSSMB: float64(peakKB) / 1024,
		Phases:   phases,
	}
	f.CPU = f.User + f.System
	f.PeakHeapMB, f.MaxLiveMB = heapFigures(stderr.Bytes())
	return f, nil
}

// gcHeaps matches the heap sizes of a GC trace line: "4->5->2 MB" is the
// heap when the collection started, when it ended (the program allocates
// while it runs), and what it found live.
var gcHeaps = regexp.MustCompile(`(?m)^gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// heapFigures reads the largest heap and the largest live heap from a GC
// trace.
func heapFigures(log []byte) (peak, live int) {
	for _, m := range gcHeaps.FindAllSubmatch(log, -1) {
		start, _ := strconv.Atoi(string(m[1]))
		end, _ := strconv.Atoi(string(m[2]))
		found, _ := strconv.Atoi(string(m[3]))
		peak, live = max(peak, start, end), max(live, found)
	}
	return peak, live
}

func timeval(tv syscall.Timeval) Seconds {
	return Seconds(float64(tv.Sec) + float64(tv.Usec)/1e6)
}

// peakRSSInterval is how often the child's peak RSS is sampled. The peak
// only grows, so sampling misses at most what the last interval before exit
// added, when the job only writes small rows and leaves.
const peakRSSInterval = 10 * time.Millisecond

// samplePeakRSS follows VmHWM, the peak resident set of the child's own
// memory image, until done is closed, and then sends the highest value seen
// in KiB. The child's ru_maxrss cannot serve: Linux records the peak of the
// image a process replaces at exec, and a child started by fork or vfork
// replaces a view of this benchmark's own, much larger memory.
func samplePeakRSS(pid int, done <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	status := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		var peak int64
		tick := time.NewTicker(peakRSSInterval)
		defer tick.Stop()
		for {
			if kb, ok := readVmHWM(status); ok {
				peak = max(peak, kb)
			}
			select {
			case <-done:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

func readVmHWM(status string) (int64, bool) {
	kb, err := strconv.ParseInt(strings.TrimSuffix(procField(status, "VmHWM"), " kB"), 10, 64)
	return kb, err == nil
}
