package jobs_test

import (
	"context"
	"errors"
	"testing"
)

// Shoots are counted as they are listed: a list that starts over counts
// every shoot once, not once per attempt.
func TestGatherCountsEachShootOnceWhenTheListStartsOver(t *testing.T) {
	s := newFakeScene(t)
	s.gardener.RestartShootsAfter = 2
	f, err := s.runner.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	busy := f.Tally.Usage("aws-busy")
	if busy.Shoots != 2 || busy.ShootOwners.Of("ga-1") != 2 || f.Tally.ShootsTotal != 3 {
		t.Fatalf("after a restart: aws-busy holds %d shoots (%d of ga-1), %d in all; want 2, 2, 3",
			busy.Shoots, busy.ShootOwners.Of("ga-1"), f.Tally.ShootsTotal)
	}
	if got := f.Tally.Usage("aws-unknown-shoot"); got.Shoots != 1 || len(got.ShootOwners) != 0 {
		t.Fatalf("aws-unknown-shoot: %d shoots, owners %v; want 1 and none", got.Shoots, got.ShootOwners)
	}
}

// Counting shoots waits for KEB's runtime IDs; when the database read
// fails, the wait ends with the read's error instead of hanging.
func TestGatherFailsWithTheDatabaseWhileShootsWait(t *testing.T) {
	s := newFakeScene(t)
	readErr := errors.New("connection refused")
	s.store.Fail["ReadInstanceCounts"] = readErr
	if _, err := s.runner.Gather(context.Background()); !errors.Is(err, readErr) {
		t.Fatalf("gather with a failing database read: %v, want %v", err, readErr)
	}
}

// A namespace without shoots still tallies KEB's instances.
func TestGatherWithoutShootsTalliesInstances(t *testing.T) {
	s := newFakeScene(t)
	for _, name := range []string{"c1", "c2", "c3"} {
		s.gardener.DeleteShoot(name)
	}
	f, err := s.runner.Gather(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Tally.Usage("aws-busy"); got.Instances != 2 || got.Shoots != 0 || got.Binding == nil {
		t.Fatalf("aws-busy: %+v", got)
	}
}
