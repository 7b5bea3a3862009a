package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

// Job is one unit of work of a run, as the Registry lists it. The file that
// holds a job declares it (Define), with its settings, their defaults and
// their checks, and Registry lists it once; the runner, `run --jobs`,
// serve's schedules, the configuration file's sections and the validation
// of schedules.* all read it from there.
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
	// Section is the key of the job's own settings in the configuration
	// file, its name; "" when the job has none.
	Section string

	// kind makes the job's settings as they are before the file is read.
	kind func() settings
}

// Build makes one run of a job: the job with its own settings, the narrow
// ports it declares in its file, from the run's adapters, and the run's
// pass.
type Build func(Ports, Pass) Task

// Task is a job built for one run: it decides on the run's facts and acts.
type Task interface {
	Run(ctx context.Context, f *Facts) error
}

// Declaration is a job as its file declares it, with settings of type S.
type Declaration[S any] struct {
	Name string
	// Does is the job in a line of the help.
	Does string
	// Schedule is the job's default cron schedule.
	Schedule string
	// Defaults makes the job's settings as they are before the file is
	// read, from the section named after the job: strictly, over the
	// defaults, an unknown key or a value of the wrong type refused naming
	// its whole path. Nil for a job without settings (S NoSettings),
	// which has no section.
	Defaults func() S
	// Check refuses settings that cannot run, naming the key and the
	// value; nil for none.
	Check func(S) error
	// Build makes a run of the job with its settings.
	Build func(S) Build
}

// NoSettings are the settings of a job that has none.
type NoSettings struct{}

// Declared is a declared job: its entry of the Registry, and its settings
// as the type they are.
type Declared[S any] struct {
	Job
	declaration *Declaration[S]
}

// Define declares a job.
func Define[S any](d Declaration[S]) Declared[S] {
	job := Job{Name: d.Name, Does: d.Does, DefaultSchedule: d.Schedule}
	if d.Defaults != nil {
		job.Section = d.Name
	}
	decl := &d
	job.kind = func() settings { return typedSettings[S]{value: decl.defaults(), declaration: decl} }
	return Declared[S]{Job: job, declaration: decl}
}

func (d *Declaration[S]) defaults() S {
	if d.Defaults == nil {
		var none S
		return none
	}
	return d.Defaults()
}

// Of returns the job's settings in s: its defaults when s holds none.
func (j Declared[S]) Of(s Setup) S {
	if t, ok := s.own[j.Name].(typedSettings[S]); ok {
		return t.value
	}
	return j.declaration.defaults()
}

// Change changes the job's settings in s alone (a copy of s made before
// keeps its own). Resolving the configuration again checks them.
func (j Declared[S]) Change(s *Setup, change func(*S)) {
	v := j.Of(*s)
	change(&v)
	s.set(j.Name, typedSettings[S]{value: v, declaration: j.declaration})
}

// settings are one job's settings, of the type its declaration names.
type settings interface {
	// over reads node, the job's section, over these settings.
	over(key string, node any) (settings, error)
	check() error
	build() Build
	// keys are the settings' keys in the job's section.
	keys() []string
	// resolved is the settings as the job applies them, for showing.
	resolved() any
}

type typedSettings[S any] struct {
	value       S
	declaration *Declaration[S]
}

func (t typedSettings[S]) over(key string, node any) (settings, error) {
	v := t.value
	err := decodeSection(key, node, &v)
	return typedSettings[S]{value: v, declaration: t.declaration}, err
}

func (t typedSettings[S]) check() error {
	if t.declaration.Check == nil {
		return nil
	}
	return t.declaration.Check(t.value)
}

func (t typedSettings[S]) build() Build { return t.declaration.Build(t.value) }

func (t typedSettings[S]) resolved() any { return t.value }

func (t typedSettings[S]) keys() []string {
	var section map[string]any
	if b, err := json.Marshal(t.value); err == nil {
		_ = json.Unmarshal(b, &section) // settings are a struct of plain fields
	}
	return slices.Sorted(maps.Keys(section))
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
var Registry = []Job{DriftJob.Job, CandidatesJob.Job, ShadowJob.Job, ReleaseJob.Job, MetricsJob.Job}

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
