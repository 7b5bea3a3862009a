package jobs

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/hap-reconciler/internal/setting"
)

// The README's example of a new job, as it stands there. Its declarations
// compile with the package, from its port on: the job's value builds the
// job from a Setup with a Tidy section and a jobs.Store that serves
// tidyStore, which the package does not have until a real job adds them,
// so the value is held to the README as text (tidyJobValue), and to the
// package by the jobs beside it, which are declared the same way.
// internal/jobs/tidy.go
// tidyStore is what the tidy job needs of the database, served by
// internal/db/tidy.go on the table its migration creates.
type tidyStore interface {
	DeleteAuditBefore(ctx context.Context, before time.Time) (deleted int, err error)
}

// TidySettings are the section tidy of the configuration file.
type TidySettings struct {
	KeepFor setting.Duration `json:"keepFor"`
}

func defaultTidySettings() TidySettings {
	return TidySettings{KeepFor: setting.Duration{Duration: 720 * time.Hour}}
}
func (s TidySettings) check() error { return setting.Positive("tidy.keepFor", s.KeepFor) }

// tidy is the example's job; its work is beside the point here.
type tidy struct {
	Pass
	settings TidySettings
	store    tidyStore
}

func (t *tidy) Run(context.Context, *Facts) error { return nil }

func TestTheREADMEsJobExampleCompiles(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(self), "// internal/jobs/tidy.go\n") + len("// internal/jobs/tidy.go\n")
	end := strings.Index(string(self), "// tidy is the example's job")
	example := "```go\n// internal/jobs/tidy.go\n" + tidyJobValue + "\n" + strings.TrimSpace(string(self)[start:end]) + "\n```"
	if !strings.Contains(string(readme), example) {
		t.Fatalf("the README's job example is not the one this file compiles:\n%s", example)
	}
	job := &tidy{settings: defaultTidySettings(), store: tidyStore(nil)}
	if got := job.settings.KeepFor.Duration; got != 720*time.Hour {
		t.Fatalf("the example's default keepFor: %s", got)
	}
	if err := job.settings.check(); err != nil {
		t.Fatalf("the example's defaults fail its check: %v", err)
	}
}

// tidyJobValue is the example's job value, as the README shows it.
const tidyJobValue = `const JobTidy = "tidy"

// tidyJob is the tidy job; its settings are the section tidy (Setup.Tidy).
var tidyJob = Job{
	Name:            JobTidy,
	Does:            "deletes the audit rows older than tidy.keepFor",
	DefaultSchedule: "0 3 * * *",
	build: func(s Setup, p Ports, pass Pass) task {
		return &tidy{Pass: pass, settings: s.Tidy, store: p.Store}
	},
}
`
