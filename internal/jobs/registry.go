package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Job is one unit of work of a run. The file that holds a job declares it,
// and Registry lists it once; the runner, `run --jobs`, serve's schedules
// and the validation of schedules.* all read it from there.
type Job struct {
	// Name selects the job in --jobs, keys schedules.<name> and labels the
	// job's logs and metrics.
	Name string
	// DefaultSchedule is the cron schedule serve runs the job on when
	// schedules.<name> is not set.
	DefaultSchedule string
	// Configure takes the job's own settings out of the resolved
	// configuration, once, when the runner is built. What it returns
	// builds the job for each run, on the run's ports.
	Configure func(Settings) Build
}

// Build makes one run of a job: the job with its own settings, the narrow
// ports it uses (declared in its file) and the run's pass.
type Build func(Ports, Pass) Task

// Task is a job built for one run: it decides on the run's facts and acts.
type Task interface {
	Run(ctx context.Context, f *Facts) error
}

// Registry lists every job in the order a run executes them: candidates use
// nothing drift writes, but an operator reading the logs sees findings
// before the table.
var Registry = []Job{driftJob, candidatesJob, shadowJob, releaseJob, metricsJob}

// AllJobs names every job in run order.
var AllJobs = jobNames()

func jobNames() []string {
	names := make([]string, len(Registry))
	for i, j := range Registry {
		names[i] = j.Name
	}
	return names
}

func lookupJob(name string) (Job, bool) {
	i := slices.IndexFunc(Registry, func(j Job) bool { return j.Name == name })
	if i < 0 {
		return Job{}, false
	}
	return Registry[i], true
}

// ParseJobs reads a comma-separated job list such as "drift,candidates" and
// returns it in run order; an empty list is every job.
func ParseJobs(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return AllJobs, nil
	}
	want := map[string]bool{}
	for _, j := range strings.Split(list, ",") {
		j = strings.TrimSpace(j)
		if _, ok := lookupJob(j); !ok {
			return nil, fmt.Errorf("--jobs: unknown job %q (known: %s)", j, strings.Join(AllJobs, ", "))
		}
		want[j] = true
	}
	var jobs []string
	for _, j := range AllJobs {
		if want[j] {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}
