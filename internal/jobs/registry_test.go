package jobs_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/config"
	"github.com/kyma-project/hap-reconciler/internal/jobs"
)

func TestTheRegistryNamesEveryJobInRunOrder(t *testing.T) {
	// The order a run needs: drift's findings before the table, the table
	// before the shadow compares with it and the release retires from it,
	// the metrics last, on what the others left. A job added later takes
	// its own place.
	want := []string{"drift", "candidates", "shadow", "release", "metrics"}
	if got := slices.DeleteFunc(slices.Clone(jobs.AllJobs), func(j string) bool { return !slices.Contains(want, j) }); !slices.Equal(got, want) {
		t.Errorf("AllJobs = %v, want %v in this order", jobs.AllJobs, want)
	}
	if unique := slices.Compact(slices.Sorted(slices.Values(jobs.AllJobs))); len(unique) != len(jobs.AllJobs) {
		t.Errorf("AllJobs = %v names a job twice", jobs.AllJobs)
	}
	got, err := jobs.ParseJobs(" metrics, drift")
	if err != nil || !slices.Equal(got, []string{"drift", "metrics"}) {
		t.Errorf("ParseJobs = %v, %v; want run order", got, err)
	}
	if _, err := jobs.ParseJobs("drift,purge"); err == nil || !strings.Contains(err.Error(), `"purge"`) {
		t.Errorf("ParseJobs accepted an unknown job: %v", err)
	}
}

// resolve reads doc as the configuration file over the defaults and
// resolves it, as loading it does.
func resolve(t *testing.T, doc string) (config.Config, error) {
	t.Helper()
	cfg := config.Default()
	if err := config.Parse([]byte(doc), &cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.Resolve()
}

func TestSchedulesComeFromTheConfigurationElseTheJobsDefault(t *testing.T) {
	cfg, err := resolve(t, "schedules: {release: '@every 1h'}\n")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Jobs.CronSchedules()
	if got := s["release"]; got != "@every 1h" {
		t.Errorf("release schedule %q", got)
	}
	for _, job := range jobs.AllJobs {
		if job != "release" && s[job] == "" {
			t.Errorf("%s has no default schedule", job)
		}
	}
}

func TestResolveNamesTheBadScheduleKeyAndItsValue(t *testing.T) {
	for _, c := range []struct {
		schedules string
		want      []string
	}{
		{"{drift: every ten minutes}", []string{"schedules.drift", `"every ten minutes"`, "cron"}},
		{"{purge: '@hourly'}", []string{"schedules.purge", "names no job", "drift, candidates, shadow, release, metrics"}},
	} {
		_, err := resolve(t, "schedules: "+c.schedules+"\n")
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
	if _, err := resolve(t, "schedules: {drift: '*/3 * * * *', metrics: '@every 30s'}\n"); err != nil {
		t.Error(err)
	}
}

// Each job reads its own section over its defaults, strictly, and keeps
// the defaults of what the section leaves out; a copy of the configuration
// changed afterwards keeps its own settings.
func TestEachJobReadsItsOwnSection(t *testing.T) {
	cfg, err := resolve(t, "release: {maxPerRun: 3}\nshadow: {window: 24h}\n")
	if err != nil {
		t.Fatal(err)
	}
	release := cfg.Jobs.Release
	if release.MaxPerRun != 3 || !release.Enabled || release.Mode != jobs.ReleaseDirty || release.GracePeriod.Duration != time.Hour {
		t.Errorf("release settings %+v", release)
	}
	if w := cfg.Jobs.Shadow.Window.Duration; w != 24*time.Hour {
		t.Errorf("shadow.window %v", w)
	}
	changed := cfg
	changed.Jobs.Release.MaxPerRun = 7
	if got := cfg.Jobs.Release.MaxPerRun; got != 3 {
		t.Errorf("changing a copy changed the original: maxPerRun %d", got)
	}
	if _, err := resolve(t, "candidates: {reservationTTL: 1h, ttl: 2h}\n"); err == nil || !strings.Contains(err.Error(), "candidates.ttl: unknown key") {
		t.Errorf("an unknown key of a job's section: %v", err)
	}
}

// candidates.gardenerSeenEvery: 2s by default, 0 turns serve's proofs off,
// a negative interval is refused naming the key.
func TestGardenerSeenEveryMayBeOffButNotNegative(t *testing.T) {
	cfg, err := resolve(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if every := cfg.Jobs.Candidates.GardenerSeenEvery.Duration; every != 2*time.Second {
		t.Errorf("default candidates.gardenerSeenEvery %s, want 2s", every)
	}
	if cfg, err := resolve(t, "candidates: {gardenerSeenEvery: 0s}\n"); err != nil || cfg.Jobs.Candidates.GardenerSeenEvery.Duration != 0 {
		t.Errorf("candidates.gardenerSeenEvery 0s: %v", err)
	}
	if _, err := resolve(t, "candidates: {gardenerSeenEvery: -1s}\n"); err == nil || !strings.Contains(err.Error(), "candidates.gardenerSeenEvery") {
		t.Errorf("a negative candidates.gardenerSeenEvery: %v", err)
	}
}
