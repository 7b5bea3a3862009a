package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

// Job is one unit of work of a run, as the Registry lists it. The file that
// holds a job declares it, and its settings' struct, defaults and checks
// beside it; Registry lists it once, and Setup holds its section. The
// runner, `run --jobs`, serve's schedules and the validation of
// schedules.* all read it from there.
type Job struct {
	// Name selects the job in --jobs, keys schedules.<name>, names the
	// job's section of the configuration file when it has settings, and
	// labels the job's logs and metrics.
	Name string
	// Does says in a line what the job does, for the help.
	Does string
	// DefaultSchedule is the cron schedule serve runs the job on when
	// schedules.<name> is not set.
	DefaultSchedule string

	// build makes one run of the job: the job with its own section of s,
	// its narrow ports from the run's adapters, and the run's pass.
	build func(s Setup, p Ports, pass Pass) task
}

// task is a job built for one run: it decides on the run's facts and acts.
type task interface {
	Run(ctx context.Context, f *Facts) error
}

// KEB is what every job shares, resolved once when the configuration is
// loaded: KEB's multi-account policy and KEB's rules, as KEB applies them.
// They come with each run's gathered facts (Facts.Policy, Facts.Rules).
type KEB struct {
	Policy hap.Policy
	Rules  rules.RuleSet
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

// DefaultSchedules returns every job's default schedule, keyed by its name.
func DefaultSchedules() map[string]string {
	out := make(map[string]string, len(Registry))
	for _, j := range Registry {
		out[j.Name] = j.DefaultSchedule
	}
	return out
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
