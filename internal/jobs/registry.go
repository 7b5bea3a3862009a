package jobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/kyma-project/hap-reconciler/internal/config"
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
	// run decides on the run's facts and acts through w. It picks the
	// job's own settings out of cfg and hands the job only those.
	run func(ctx context.Context, w *Work, f *Facts, cfg config.Config) error
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

// Schedule is the cron schedule serve runs the job on: schedules.<name>, or
// the job's default.
func Schedule(cfg config.Config, job string) string {
	if spec := cfg.Schedules[job]; spec != "" {
		return spec
	}
	j, _ := lookupJob(job)
	return j.DefaultSchedule
}

// CheckSchedules refuses a schedules.* key that names no job and a value
// that is not a cron schedule, naming the key and the value.
func CheckSchedules(cfg config.Config) error {
	for _, name := range slices.Sorted(maps.Keys(cfg.Schedules)) {
		key := "schedules." + name
		if _, ok := lookupJob(name); !ok {
			return &config.Error{Key: key, Reason: fmt.Sprintf("names no job (known: %s)", strings.Join(AllJobs, ", "))}
		}
		spec := cfg.Schedules[name]
		if _, err := cron.ParseStandard(spec); err != nil {
			return &config.Error{Key: key, Value: fmt.Sprintf("%q", spec), Reason: fmt.Sprintf("is not a cron schedule (%v)", err)}
		}
	}
	return nil
}
