package db

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// placeholders are what a statement may leave for its caller to fill.
var placeholders = []string{"{{owner}}", "{{active}}", "{{resolved}}", "{{migrations}}", "{{legacy}}"}

func TestEveryStatementFileIsEmbeddedAndWellFormed(t *testing.T) {
	goFiles, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	embedded := map[string]bool{}
	directive := regexp.MustCompile(`(?m)^\s*//go:embed (sql/\S+\.sql)$`)
	for _, name := range goFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range directive.FindAllStringSubmatch(string(text), -1) {
			embedded[m[1]] = true
		}
	}
	files, err := fs.Glob(os.DirFS("."), "sql/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("statement files: %v, %v", files, err)
	}
	s := &Store{schema: "hap"}
	castAfterName := regexp.MustCompile(`@\w+::`)
	for _, name := range files {
		if !strings.HasSuffix(name, ".sql") {
			t.Errorf("%s: a statement file ends in .sql", name)
			continue
		}
		if !embedded[name] {
			t.Errorf("%s is embedded by no file of the package: a statement nobody runs", name)
		}
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(text), "-- ") {
			t.Errorf("%s does not open with a comment saying what it does", name)
		}
		sent := s.sql(string(text))
		for _, p := range placeholders {
			sent = strings.ReplaceAll(sent, p, "x")
		}
		switch {
		case strings.Contains(sent, "{{"):
			t.Errorf("%s leaves a placeholder nobody fills: %s", name, sent)
		case strings.Contains(sent, "?"):
			t.Errorf("%s holds a ?, which gorm reads as a positional parameter: %s", name, sent)
		case castAfterName.MatchString(sent):
			t.Errorf("%s casts right after a parameter, which gorm reads as part of its name (write (@name)::type): %s", name, sent)
		case strings.Contains(sent, "--"):
			t.Errorf("%s has a comment after SQL on a line: comments take lines of their own, which are not sent", name)
		}
	}
	for name := range embedded {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("%s is embedded but missing: %v", name, err)
		}
	}
}

func TestAStatementIsSentWithoutItsCommentsAndForItsSchema(t *testing.T) {
	s := &Store{schema: "tenant_b"}
	got := s.sql("-- names @ga, which must not be filled\nSELECT * FROM {{schema}}.t\n  -- indented too\nWHERE a = @a", "@a", "@b")
	if want := "SELECT * FROM tenant_b.t\nWHERE a = @b"; got != want {
		t.Fatalf("rendered %q, want %q", got, want)
	}
}

func TestRowsTravelKeyedByTheirColumns(t *testing.T) {
	limit := 3
	got, err := rowsJSON([]candidateRow{{CandidateValues: CandidateValues{BindingName: "b-1", EUAccess: true, ClusterLimit: &limit}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"binding_name":"b-1"`, `"eu_access":true`, `"cluster_limit":3`, `"headroom":null`, `"computed_at":"0001-01-01T00:00:00Z"`} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
}
