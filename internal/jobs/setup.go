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

// SchedulesSection is the key of the configuration file that holds the
// jobs' cron schedules, schedules.<name>.
const SchedulesSection = "schedules"

// Setup is what the jobs apply: KEB's policy and rules, each job's own
// settings and the schedules, read from the jobs' sections of the
// configuration file (ReadSection) and resolved once, when the file is
// loaded. NewRunner hands each job its own settings; the runner keeps none.
type Setup struct {
	// KEB is set by whoever reads KEB's settings (internal/config), once.
	KEB KEB

	// own holds each job's settings by the job's name; schedules holds
	// schedules.* as the file writes them.
	own       map[string]settings
	schedules map[string]string
	// retention holds retention.* as the file writes them over the
	// defaults; nil: the defaults.
	retention *RetentionSettings
}

// NewSetup returns every job's default settings and no schedule of the
// file's: every job on its default schedule.
func NewSetup() Setup {
	s := Setup{own: make(map[string]settings, len(Registry))}
	for _, j := range Registry {
		s.own[j.Name] = j.kind()
	}
	return s
}

// Sections returns the keys of the configuration file the jobs own:
// schedules, retention, then each job's section, in run order.
func Sections() []string {
	out := []string{SchedulesSection, RetentionSection}
	for _, j := range Registry {
		if j.Section != "" {
			out = append(out, j.Section)
		}
	}
	return out
}

// ReadSection decodes node, the file's section key (one of Sections), over
// what s holds, strictly: an unknown key or a value of the wrong type is a
// *setting.Error naming its whole path.
func (s *Setup) ReadSection(key string, node any) error {
	if key == SchedulesSection {
		schedules := maps.Clone(s.schedules)
		if err := decodeSection(key, node, &schedules); err != nil {
			return err
		}
		s.schedules = schedules
		return nil
	}
	if key == RetentionSection {
		r := s.retentionSettings()
		if err := decodeSection(key, node, &r); err != nil {
			return err
		}
		s.retention = &r
		return nil
	}
	for _, j := range Registry {
		if j.Section != key || key == "" {
			continue
		}
		v, err := s.settingsOf(j).over(key, node)
		if err != nil {
			return err
		}
		s.set(j.Name, v)
		return nil
	}
	return &setting.Error{Key: key, Reason: "unknown key"}
}

// Check checks every job's settings, then every schedules.* key and value,
// then retention.*, and returns the first bad one: a *setting.Error naming
// the key and the value.
func (s Setup) Check() error {
	for _, j := range Registry {
		if err := s.settingsOf(j).check(); err != nil {
			return err
		}
	}
	if err := checkSchedules(s.schedules); err != nil {
		return err
	}
	return s.retentionSettings().check()
}

// Schedules returns every job's cron schedule: schedules.<name>, else the
// job's default.
func (s Setup) Schedules() map[string]string {
	out := make(map[string]string, len(Registry))
	for _, j := range Registry {
		out[j.Name] = cmp.Or(s.schedules[j.Name], j.DefaultSchedule)
	}
	return out
}

// Resolved returns the jobs' sections as the jobs apply them, keyed as the
// file writes them: schedules (every job's, the defaults included),
// retention, then each job's settings, for `config view`.
func (s Setup) Resolved() map[string]any {
	out := map[string]any{SchedulesSection: s.Schedules(), RetentionSection: s.retentionSettings()}
	for _, j := range Registry {
		if j.Section != "" {
			out[j.Section] = s.settingsOf(j).resolved()
		}
	}
	return out
}

// settingsOf returns job j's settings; its defaults when s holds none.
func (s Setup) settingsOf(j Job) settings {
	if v, ok := s.own[j.Name]; ok {
		return v
	}
	return j.kind()
}

// set replaces job name's settings in a map of s's own: copies of a Setup
// share none.
func (s *Setup) set(name string, v settings) {
	s.own = maps.Clone(s.own)
	if s.own == nil {
		s.own = map[string]settings{}
	}
	s.own[name] = v
}

// checkSchedules refuses a key that names no job and a value that is not a
// cron schedule, naming the key and the value.
func checkSchedules(schedules map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(schedules)) {
		key := SchedulesSection + "." + name
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

var decodeSection = setting.Decode
