package jobs_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

func TestTheRegistryNamesEveryJobInRunOrder(t *testing.T) {
	if want := []string{"drift", "candidates", "shadow", "release", "metrics"}; !slices.Equal(jobs.AllJobs, want) {
		t.Errorf("AllJobs = %v, want %v", jobs.AllJobs, want)
	}
	got, err := jobs.ParseJobs(" metrics, drift")
	if err != nil || !slices.Equal(got, []string{"drift", "metrics"}) {
		t.Errorf("ParseJobs = %v, %v; want run order", got, err)
	}
	if _, err := jobs.ParseJobs("drift,purge"); err == nil || !strings.Contains(err.Error(), `"purge"`) {
		t.Errorf("ParseJobs accepted an unknown job: %v", err)
	}
}

func TestSchedulesComeFromTheConfigurationElseTheJobsDefault(t *testing.T) {
	cfg := config.Default()
	cfg.Schedules = config.Schedules{"release": "@every 1h"}
	s, err := jobs.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Schedules["release"]; got != "@every 1h" {
		t.Errorf("release schedule %q", got)
	}
	for _, job := range jobs.AllJobs {
		if job != "release" && s.Schedules[job] == "" {
			t.Errorf("%s has no default schedule", job)
		}
	}
}

func TestResolveNamesTheBadScheduleKeyAndItsValue(t *testing.T) {
	for _, c := range []struct {
		schedules config.Schedules
		want      []string
	}{
		{config.Schedules{"drift": "every ten minutes"}, []string{"schedules.drift", `"every ten minutes"`, "cron"}},
		{config.Schedules{"purge": "@hourly"}, []string{"schedules.purge", "names no job", "drift, candidates, shadow, release, metrics"}},
	} {
		cfg := config.Default()
		cfg.Schedules = c.schedules
		_, err := jobs.Resolve(cfg)
		var cfgErr *config.Error
		if !errors.As(err, &cfgErr) {
			t.Fatalf("%v: %v is not a configuration error", c.schedules, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", c.schedules, err, w)
			}
		}
	}
	cfg := config.Default()
	cfg.Schedules = config.Schedules{"drift": "*/3 * * * *", "metrics": "@every 30s"}
	if _, err := jobs.Resolve(cfg); err != nil {
		t.Error(err)
	}
}
