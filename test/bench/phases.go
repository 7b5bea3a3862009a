package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Phases splits a run's wall time. The three reads run at the same time, so
// they overlap; Startup, Gather, Decide, Write and Exit add up to the wall.
type Phases struct {
	// Startup is process start, configuration, connecting, migrating and
	// taking the run lock, plus indexing the fleet once read: the time up
	// to "gathered the fleet" that the longest read does not explain.
	Startup Seconds `json:"startupSeconds"`
	// Gather runs from the start of the reads to the fleet being indexed.
	Gather       Seconds `json:"gatherSeconds"`
	ListShoots   Seconds `json:"listShootsSeconds"`
	ListBindings Seconds `json:"listBindingsSeconds"`
	ReadDatabase Seconds `json:"dbCountsSeconds"`
	// Decide and Write sum, over the jobs, the time before and after each
	// job's "decided" line.
	Decide Seconds `json:"decideSeconds"`
	Write  Seconds `json:"writeSeconds"`
	// Exit is from the last job's end to the process having exited.
	Exit Seconds `json:"exitSeconds"`
	// Jobs is each job's own time as it logged it.
	Jobs map[string]Seconds `json:"jobSeconds"`
}

// logLine is the part of a log line (KEB's shape: time, level, msg) the
// phases come from.
type logLine struct {
	Time         string   `json:"time"`
	Msg          string   `json:"msg"`
	Job          string   `json:"job"`
	Took         *float64 `json:"took"`
	ListShoots   *float64 `json:"listShoots"`
	ListBindings *float64 `json:"listBindings"`
	ReadDatabase *float64 `json:"readDatabase"`
}

// parsePhases reads the run's log: "gathered the fleet" carries the read
// times, each job logs "decided" between deciding and acting and "job done"
// at its end. Log timestamps are RFC 3339 with nanoseconds.
func parsePhases(log []byte, start, end time.Time) (Phases, error) {
	p := Phases{Jobs: map[string]Seconds{}}
	var gathered, lastBoundary time.Time
	decided := map[string]time.Time{}
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var l logLine
		if err := json.Unmarshal(line, &l); err != nil {
			return p, fmt.Errorf("read run log line %q: %w", truncate(line, 200), err)
		}
		ts, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil {
			return p, fmt.Errorf("read run log time %q: %w", l.Time, err)
		}
		switch l.Msg {
		case "gathered the fleet":
			gathered, lastBoundary = ts, ts
			p.ListShoots, p.ListBindings, p.ReadDatabase = secondsOf(l.ListShoots), secondsOf(l.ListBindings), secondsOf(l.ReadDatabase)
		case "decided":
			decided[l.Job] = ts
		case "job done":
			p.Jobs[l.Job] = secondsOf(l.Took)
			if d, ok := decided[l.Job]; ok {
				p.Decide += Seconds(d.Sub(lastBoundary).Seconds())
				p.Write += Seconds(ts.Sub(d).Seconds())
			} else {
				// A job that acts on nothing but memory (metrics)
				// logs no "decided": all of it is deciding.
				p.Decide += Seconds(ts.Sub(lastBoundary).Seconds())
			}
			lastBoundary = ts
		}
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("read run log: %w", err)
	}
	if gathered.IsZero() {
		return p, fmt.Errorf("the run logged no %q line:\n%s", "gathered the fleet", tailLines(string(log), 20))
	}
	p.Gather = max(p.ListShoots, p.ListBindings, p.ReadDatabase)
	p.Startup = Seconds(gathered.Sub(start).Seconds()) - p.Gather
	p.Exit = Seconds(end.Sub(lastBoundary).Seconds())
	return p, nil
}

// secondsOf reads a logged duration, integer nanoseconds as KEB's slog
// writes them.
func secondsOf(nanos *float64) Seconds {
	if nanos == nil {
		return 0
	}
	return Seconds(*nanos / 1e9)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
