package soak

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Restart is one fault of the run: a server restarted, and when the job
// had recovered (every job's last success after the server was back).
type Restart struct {
	Server string    `json:"server"`
	At     time.Time `json:"at"`
	// BackAt is when the server answered again, RecoveredAt when every
	// job had succeeded after that.
	BackAt      time.Time `json:"backAt"`
	RecoveredAt time.Time `json:"recoveredAt"`
}

// Report is a soak's result as written to its directory.
type Report struct {
	Started  time.Time      `json:"started"`
	Duration string         `json:"duration"`
	WarmUp   string         `json:"warmUp"`
	Commit   string         `json:"commit,omitempty"`
	Machine  string         `json:"machine,omitempty"`
	Config   string         `json:"jobConfig"`
	Restarts []Restart      `json:"restarts"`
	Driver   map[string]int `json:"driver"`
	Verdicts []Verdict      `json:"verdicts"`
	Samples  []Sample       `json:"samples"`
	AllFlat  bool           `json:"allFlat"`
}

// Table is the verdicts as a markdown table: start, end, slope per hour,
// drift over the run against what the bound allows, and the verdict.
func Table(vs []Verdict) string {
	var b strings.Builder
	b.WriteString("| series | samples | start | end | min | max | slope per hour | drift over the run | allowed | verdict |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, v := range vs {
		verdict := "flat"
		if !v.Flat {
			verdict = "**grows**"
			if v.Drift < 0 {
				verdict = "**falls**"
			}
		}
		f := formatterFor(v.Series)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", v.Series, v.Samples,
			f(v.Start), f(v.End), f(v.Min), f(v.Max), f(v.SlopePerHour), f(v.Drift), f(v.Allowed), verdict)
	}
	return b.String()
}

// formatterFor shows bytes in MiB and counts as numbers.
func formatterFor(series string) func(float64) string {
	if strings.HasSuffix(series, "_bytes") {
		return func(x float64) string { return fmt.Sprintf("%.1f MiB", x/MiB) }
	}
	return func(x float64) string {
		if x == math.Trunc(x) {
			return fmt.Sprintf("%.0f", x)
		}
		return fmt.Sprintf("%.1f", x)
	}
}

// Write stores the report as JSON and its table as markdown in dir, both
// named after when the run started.
func Write(dir string, r Report) (jsonPath, markdownPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	stamp := r.Started.UTC().Format("2006-01-02T150405Z")
	jsonPath = filepath.Join(dir, stamp+".json")
	markdownPath = filepath.Join(dir, stamp+".md")
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(jsonPath, append(data, '\n'), 0o644); err != nil {
		return "", "", err
	}
	return jsonPath, markdownPath, os.WriteFile(markdownPath, []byte(Markdown(r)), 0o644)
}

// Markdown is the report's summary: the run, its restarts and the table.
func Markdown(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Soak of %s from %s (warm-up %s", r.Duration, r.Started.UTC().Format(time.RFC3339), r.WarmUp)
	if r.Commit != "" {
		fmt.Fprintf(&b, ", commit %s", r.Commit)
	}
	if r.Machine != "" {
		fmt.Fprintf(&b, ", %s", r.Machine)
	}
	b.WriteString(").\n\n")
	fmt.Fprintf(&b, "Restarts: %d.", len(r.Restarts))
	for _, s := range r.Restarts {
		fmt.Fprintf(&b, " %s at +%s (back after %s, every job succeeded again %s later);", s.Server,
			s.At.Sub(r.Started).Round(time.Second), s.BackAt.Sub(s.At).Round(100*time.Millisecond),
			s.RecoveredAt.Sub(s.BackAt).Round(100*time.Millisecond))
	}
	b.WriteString("\n\n")
	b.WriteString(Table(r.Verdicts))
	verdict := "every series flat"
	if !r.AllFlat {
		verdict = "NOT every series flat"
	}
	fmt.Fprintf(&b, "\n%s.\n", verdict)
	return b.String()
}
