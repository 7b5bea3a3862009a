package jobs_test

import (
	"errors"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// replyLost passes every request on to the API server, but throws away the
// answer to the first label update of a binding and reports a broken
// connection instead: the update landed, and the job cannot know it.
type replyLost struct {
	mu      sync.Mutex
	dropped int
	binding string // whose answer was dropped
}

var errReplyLost = errors.New("connection closed before the answer arrived")

func (f *replyLost) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || req.Method != http.MethodPatch || !strings.Contains(req.URL.Path, "/credentialsbindings/") {
			return resp, err
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.dropped > 0 {
			return resp, nil
		}
		f.dropped++
		f.binding = path.Base(req.URL.Path)
		_ = resp.Body.Close()
		return nil, errReplyLost
	})
}

// A label update whose answer is lost landed all the same: the audit says
// released, no intent stays open, and the rows carry the database's time,
// not the job's clock.
func TestAReleaseWhoseAnswerIsLostIsAuditedReleased(t *testing.T) {
	s := leftEmptyPastGrace(t, 25)
	lost := &replyLost{}
	cfg := rest.CopyConfig(bed.Kube.Config())
	cfg.Wrap(lost.wrap)
	s.env = s.open(t, cfg, s.World.DatabaseURL, false)

	before := s.databaseNow(t)
	_ = s.run(t, releaseOnly) // the run may fail: it could not know at once
	if lost.dropped != 1 {
		t.Fatalf("%d answers dropped, want 1: the release was never tried", lost.dropped)
	}
	if !s.released(t, lost.binding) {
		t.Fatalf("the update of %s never reached the API server", lost.binding)
	}
	s.mustRun(t, releaseOnly) // settles whatever the first run left open
	after := s.databaseNow(t)

	if got, want := s.outcomes(t, lost.binding), []string{hap.OutcomeReleased}; !slices.Equal(got, want) {
		t.Errorf("audit outcomes of %s %v, want %v", lost.binding, got, want)
	}
	open, err := s.env.Store.OpenReleaseIntents(testContext(t))
	if err != nil || len(open) != 0 {
		t.Errorf("open intents after the next run: %v, %v", open, err)
	}
	history, err := s.Store(t, testContext(t)).ReleaseHistory(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range history {
		if r.At.Before(before) || r.At.After(after) {
			t.Errorf("%s row of %s at %s: not the database's time (between %s and %s; the job's clock says %s)",
				r.Outcome, r.BindingName, r.At, before, after, s.clock.Now())
		}
	}
}

// databaseNow is the database's clock.
func (s *scene) databaseNow(t *testing.T) time.Time {
	t.Helper()
	var now time.Time
	if err := s.Conn(t, testContext(t)).QueryRow(testContext(t), "SELECT clock_timestamp()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}
