package bench

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine is what the figures were taken on.
type Machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpuModel"`
	MemoryGB  float64 `json:"memoryGB"`
	Kernel    string  `json:"kernel"`
	GoVersion string  `json:"goVersion"`
}

// thisMachine reads /proc; a field it cannot read stays empty.
func thisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb, err := strconv.ParseFloat(strings.Fields(procField("/proc/meminfo", "MemTotal") + " 0")[0], 64); err == nil {
		m.MemoryGB = round(kb/(1<<20), 1)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// binaryVersion is what `binary version` prints, or why it printed nothing.
func binaryVersion(ctx context.Context, binary string) string {
	out, err := exec.CommandContext(ctx, binary, "version").Output()
	if err != nil {
		return "unknown: " + err.Error()
	}
	return strings.TrimSpace(string(out))
}

// procField returns the value of the first "key: value" line of file.
func procField(file, key string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
