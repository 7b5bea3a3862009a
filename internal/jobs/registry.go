package jobs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

// Job is one unit of work of a run. The file that holds a job declares it
// (Define), with its settings, their defaults and their checks, and Registry
// lists it once; the runner, `run --jobs`, serve's schedules, the
// configuration file's sections and the validation of schedules.* all read
// it from there.
type Job struct {
	// Name selects the job in --jobs, keys schedules.<name> and labels the
	// job's logs and metrics.
	Name string
	// Does says in a line what the job does, for the help.
	Does string
	// DefaultSchedule is the cron schedule serve runs the job on when
	// schedules.<name> is not set.
	DefaultSchedule string
	// Section is the key of the job's own settings in the configuration
	// file; "" when the job has none.
	Section string

	// own is how the job's settings are made, read and checked; build
	// makes one run of the job with them.
	own   ownSettings
	build func(settings any) Build
}

// Build makes one run of a job: the job with its own settings, the narrow
// ports it uses (declared in its file) and the run's pass.
type Build func(Ports, Pass) Task

// Task is a job built for one run: it decides on the run's facts and acts.
type Task interface {
	Run(ctx context.Context, f *Facts) error
}

// Define declares a job whose settings are an S: what it does, in a line
// of the help, its default schedule, the section of the configuration file
// its settings are read from ("" for none), their defaults,
// their check (nil for none) and how a run is built with them. The
// section is decoded strictly into an S over the defaults: an unknown key
// or a value of the wrong type is refused naming its whole path.
func Define[S any](name, does, schedule, section string, defaults func() S, check func(S) error, build func(S) Build) Job {
	return Job{
		Name: name, Does: does, DefaultSchedule: schedule, Section: section,
		own: ownSettings{
			defaults: func() any { return defaults() },
			decode: func(key string, node any, over any) (any, error) {
				s := over.(S)
				err := decodeSection(key, node, &s)
				return s, err
			},
			check: func(v any) error {
				if check == nil {
					return nil
				}
				return check(v.(S))
			},
		},
		build: func(v any) Build { return build(v.(S)) },
	}
}

// NoSettings are the settings of a job that has none.
type NoSettings struct{}

// ownSettings is a job's settings type, erased: its defaults, its strict
// decoding over a value, its check.
type ownSettings struct {
	defaults func() any
	decode   func(key string, node any, over any) (any, error)
	check    func(any) error
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
