package kebworkers

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
)

// Figures are a run's record: per pin and part of the run (between steps,
// or during one) how the picks answered, and the errors among the answers,
// instances left out, with their counts; the picks that overlapped each
// step and the longest of them; the longest pick outside every step; each
// step's time.
type Figures struct {
	Answers map[string]map[string]map[string]int `json:"answers"`
	Errors  map[string]map[string]map[string]int `json:"errors"`
	Steps   []StepFigure                         `json:"steps"`
	// LongestPickOutsideMs is the longest pick that overlapped no step
	// taken beside the workers, for comparison.
	LongestPickOutsideMs float64  `json:"longestPickOutsideStepsMs"`
	Picks                int      `json:"picks"`
	Provisionings        int      `json:"provisionings"`
	Notes                []string `json:"notes,omitempty"`
}

// StepFigure is a step with the picks that overlapped it (PicksDuring)
// and the longest of them, start to answer (LongestPickMs).
type StepFigure struct {
	stepTaken
	PicksDuring   int     `json:"picksDuring"`
	LongestPickMs float64 `json:"longestPickDuringMs"`
}

// instanceNamed is where an error names the instance it was asked for.
var instanceNamed = regexp.MustCompile(`instance "[^"]*"`)

// period names the part of the run p fell in: during a step it overlapped,
// else after the last step that had ended when it started; numbered in the
// run's order.
func (r *Run) period(p pickTaken) string {
	ended := 0
	for k := 1; r.setupSteps+k-1 < len(r.steps); k++ {
		s := r.steps[r.setupSteps+k-1]
		if p.start.Before(s.end) && p.end.After(s.start) {
			return fmt.Sprintf("%d during %s", 2*k-1, s.What)
		}
		if !s.end.After(p.start) {
			ended = k
		}
	}
	if ended == 0 {
		return "0 before the first step"
	}
	return fmt.Sprintf("%d after %s", 2*ended, r.steps[r.setupSteps+ended-1].What)
}

// Report logs the run's figures as JSON, fails the test for every answer
// KEB would fail the provisioning on, and returns them.
func (r *Run) Report(t *testing.T) Figures {
	t.Helper()
	r.stopWorkers()
	r.mu.Lock()
	defer r.mu.Unlock()
	f := Figures{Answers: map[string]map[string]map[string]int{}, Errors: map[string]map[string]map[string]int{},
		Picks: len(r.picks), Provisionings: r.provisioned, Notes: r.notes}
	for _, s := range r.steps {
		f.Steps = append(f.Steps, StepFigure{stepTaken: s})
	}
	for _, p := range r.picks {
		period := r.period(p)
		count(f.Answers, p.pin, period, p.kind)
		if p.err != "" {
			count(f.Errors, p.pin, period, instanceNamed.ReplaceAllString(p.err, "instance …"))
		}
		if p.kind != kindRecordFailed {
			f.overlap(p, r.setupSteps)
		}
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("KEB's replicas while the job changed:\n%s", out)
	for pin, periods := range f.Answers {
		for period, kinds := range periods {
			for kind, n := range kinds {
				switch kind {
				case kindBinding, kindClaimNew, kindClaimPending, kindLivePath, kindRecordFailed:
				default:
					t.Errorf("%s module, %s: %d answers %q, which KEB fails the provisioning on", pin, period, n, kind)
				}
			}
		}
	}
	return f
}

// overlap counts p in every step it overlapped, or as outside them all.
func (f *Figures) overlap(p pickTaken, setupSteps int) {
	during := false
	for i := setupSteps; i < len(f.Steps); i++ {
		s := &f.Steps[i]
		if p.start.Before(s.end) && p.end.After(s.start) {
			during = true
			s.PicksDuring++
			s.LongestPickMs = max(s.LongestPickMs, ms(p.end.Sub(p.start)))
		}
	}
	if !during {
		f.LongestPickOutsideMs = max(f.LongestPickOutsideMs, ms(p.end.Sub(p.start)))
	}
}

func count(into map[string]map[string]map[string]int, pin, period, what string) {
	if into[pin] == nil {
		into[pin] = map[string]map[string]int{}
	}
	if into[pin][period] == nil {
		into[pin][period] = map[string]int{}
	}
	into[pin][period][what]++
}
