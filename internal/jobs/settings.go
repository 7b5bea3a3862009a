package jobs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/hap"
	"github.com/kyma-project/hap-reconciler/internal/hap/rules"
)

// Settings is the configuration as the jobs apply it, resolved once when the
// process starts: KEB's multi-account policy, KEB's rules parsed, each job's
// own settings and every job's schedule, checked against the registry. Each
// job takes its own part when the runner is built (Job.Configure); the
// runner keeps none of it.
type Settings struct {
	Policy     hap.Policy
	Rules      rules.RuleSet
	Candidates config.Candidates
	Shadow     config.Shadow
	Release    config.Release
	// Schedules holds every job's cron schedule: schedules.<name>, else
	// the job's default.
	Schedules map[string]string
}

// Resolve checks cfg for the jobs and resolves it once. A rule KEB refuses,
// a schedules.* key that names no job or a value that is not a cron schedule
// is a *config.Error naming the key and the value.
func Resolve(cfg config.Config) (Settings, error) {
	rs, err := cfg.RuleSet()
	if err != nil {
		return Settings{}, err
	}
	if err := checkSchedules(cfg.Schedules); err != nil {
		return Settings{}, err
	}
	s := Settings{
		Policy: cfg.Policy(), Rules: rs,
		Candidates: cfg.Candidates, Shadow: cfg.Shadow, Release: cfg.Release,
		Schedules: make(map[string]string, len(Registry)),
	}
	for _, j := range Registry {
		s.Schedules[j.Name] = cmp.Or(cfg.Schedules[j.Name], j.DefaultSchedule)
	}
	return s, nil
}

// checkSchedules refuses a key that names no job and a value that is not a
// cron schedule, naming the key and the value.
func checkSchedules(schedules config.Schedules) error {
	for _, name := range slices.Sorted(maps.Keys(schedules)) {
		key := "schedules." + name
		if _, ok := lookupJob(name); !ok {
			return &config.Error{Key: key, Reason: fmt.Sprintf("names no job (known: %s)", strings.Join(AllJobs, ", "))}
		}
		spec := schedules[name]
		if _, err := cron.ParseStandard(spec); err != nil {
			return &config.Error{Key: key, Value: fmt.Sprintf("%q", spec), Reason: fmt.Sprintf("is not a cron schedule (%v)", err)}
		}
	}
	return nil
}
