package jobs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/kyma-project/hap-reconciler/internal/setting"
)

// schedulesSection is the key of the configuration file that holds the
// jobs' cron schedules, schedules.<name>.
const schedulesSection = "schedules"

// Setup is what the jobs apply: the jobs' sections of the configuration
// file, each read once, with the rest of the file (config.Parse), into the
// typed struct its job declares beside its work with the struct's defaults
// and check, and KEB's policy and rules, resolved once when the file is
// loaded. A run hands each job its own section (Job.build); the runner
// keeps none.
type Setup struct {
	// KEB is set by whoever reads KEB's settings (internal/config), once.
	KEB KEB `json:"-"`

	// Schedules holds schedules.<job> as the file writes them;
	// CronSchedules adds each job's default.
	Schedules map[string]string `json:"schedules"`
	// Retention is retention.* (retention.go).
	Retention RetentionSettings `json:"retention"`
	// Candidates, Shadow and Release are the jobs' own sections, each
	// named after its job.
	Candidates CandidatesSettings `json:"candidates"`
	Shadow     ShadowSettings     `json:"shadow"`
	Release    ReleaseSettings    `json:"release"`
}

// NewSetup returns every section's defaults and no schedule of the
// file's: every job on its default schedule.
func NewSetup() Setup {
	return Setup{
		Retention:  defaultRetention(),
		Candidates: defaultCandidatesSettings(),
		Shadow:     defaultShadowSettings(),
		Release:    defaultReleaseSettings(),
	}
}

// Check checks every job's section, then every schedules.* key and value,
// then retention.*, and returns the first bad one: a *setting.Error naming
// the key and the value.
func (s Setup) Check() error {
	for _, err := range []error{s.Candidates.check(), s.Shadow.check(), s.Release.check(), checkSchedules(s.Schedules), s.Retention.check()} {
		if err != nil {
			return err
		}
	}
	return nil
}

// CronSchedules returns every job's cron schedule: schedules.<name>, else
// the job's default.
func (s Setup) CronSchedules() map[string]string {
	out := make(map[string]string, len(Registry))
	for _, j := range Registry {
		out[j.Name] = cmp.Or(s.Schedules[j.Name], j.DefaultSchedule)
	}
	return out
}

// AsApplied returns the jobs' sections as the jobs apply them, every job's
// schedule included, for `config view`.
func (s Setup) AsApplied() Setup {
	s.Schedules = s.CronSchedules()
	return s
}

// checkSchedules refuses a key that names no job and a value that is not a
// cron schedule, naming the key and the value.
func checkSchedules(schedules map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(schedules)) {
		key := schedulesSection + "." + name
		if _, ok := lookupJob(name); !ok {
			return &setting.Error{Key: key, Reason: fmt.Sprintf("names no job (known: %s)", strings.Join(AllJobs, ", "))}
		}
		spec := schedules[name]
		if _, err := cron.ParseStandard(spec); err != nil {
			return &setting.Error{Key: key, Value: fmt.Sprintf("%q", spec), Reason: fmt.Sprintf("is not a cron schedule (%v)", err)}
		}
		if every, ok := strings.CutPrefix(spec, "@every "); ok {
			// cron runs an interval under a second, zero or negative
			// every second: a job meant hourly would run 3,600 times.
			if d, err := time.ParseDuration(strings.TrimSpace(every)); err == nil && d < time.Second {
				return &setting.Error{Key: key, Value: fmt.Sprintf("%q", spec), Reason: "must be an interval of at least 1s"}
			}
		}
	}
	return nil
}
