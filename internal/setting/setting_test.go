package setting

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// section is a job's settings as a job declares them.
type section struct {
	Every   Duration `json:"every"`
	Limit   int      `json:"limit"`
	DryRun  bool     `json:"dryRun"`
	Nested  *nested  `json:"nested"`
	Ignored string   `json:"-"`
}

type nested struct {
	Names []string `json:"names"`
}

// file is a configuration file with a job's section, jobs.demo.
type file struct {
	Jobs struct {
		Demo *section `json:"demo"`
	} `json:"jobs"`
}

// decodeDemo decodes the document {"jobs": {"demo": node}} over dst.
func decodeDemo(node any, dst *section) error {
	js, err := json.Marshal(map[string]any{"jobs": map[string]any{"demo": node}})
	if err != nil {
		return err
	}
	var f file
	f.Jobs.Demo = dst
	return Decode(js, &f)
}

// Decode keeps what dst held for a key the node leaves out, and reads the
// rest strictly: each way a section can be wrong is an *Error naming the
// whole path of the key and the value as the file wrote it.
func TestDecodeNamesTheKeyAndTheValue(t *testing.T) {
	base := section{Every: Duration{time.Minute}, Limit: 3}
	got := base
	if err := decodeDemo(map[string]any{"limit": float64(5), "nested": map[string]any{"names": []any{"a"}}}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Every.Duration != time.Minute || got.Limit != 5 || len(got.Nested.Names) != 1 {
		t.Fatalf("decoded %+v, want every kept at 1m, limit 5, one name", got)
	}

	for _, c := range []struct {
		name     string
		node     any
		key, val string
	}{
		{"an unknown key, nested", map[string]any{"nested": map[string]any{"nmaes": []any{}}}, "jobs.demo.nested.nmaes", ""},
		{"a blank key is quoted", map[string]any{" ": 1.0}, `jobs.demo." "`, ""},
		{"a duration that does not parse", map[string]any{"every": "ten minutes"}, "jobs.demo.every", `"ten minutes"`},
		{"a number for a duration", map[string]any{"every": 10.0}, "jobs.demo.every", "10"},
		{"a string for an integer", map[string]any{"limit": "3"}, "jobs.demo.limit", `"3"`},
		{"a list for a mapping", map[string]any{"nested": []any{"a"}}, "jobs.demo.nested", `["a"]`},
		{"a mapping for the section", "on", "jobs.demo", `"on"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := base
			err := decodeDemo(c.node, &dst)
			var cfg *Error
			if !errors.As(err, &cfg) || cfg.Key != c.key || cfg.Value != c.val {
				t.Fatalf("Decode: %v; want an *Error for key %s, value %s", err, c.key, c.val)
			}
		})
	}
}

// A duration is read and written as the file writes it, so a dumped
// configuration reads back the same.
func TestDurationReadsBackAsWritten(t *testing.T) {
	var d Duration
	if err := json.Unmarshal([]byte(`"1h30m"`), &d); err != nil || d.Duration != 90*time.Minute {
		t.Fatalf("unmarshal 1h30m: %v, %v", d, err)
	}
	out, err := json.Marshal(d)
	if err != nil || string(out) != `"1h30m0s"` {
		t.Fatalf("marshal: %s, %v", out, err)
	}
	var back Duration
	if err := json.Unmarshal(out, &back); err != nil || back != d {
		t.Fatalf("read back %s: %v, %v", out, back, err)
	}
}

func TestPositiveRefusesZeroAndNegative(t *testing.T) {
	if err := Positive("jobs.demo.every", Duration{time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		var cfg *Error
		if err := Positive("jobs.demo.every", Duration{d}); !errors.As(err, &cfg) || cfg.Key != "jobs.demo.every" {
			t.Errorf("Positive(%s): %v; want an *Error naming the key", d, err)
		}
	}
}

// Errors and warnings show values as the file writes them.
func TestQuoteWritesValuesAsJSON(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "null"}, {"x y", `"x y"`}, {3.0, "3"}, {true, "true"}, {[]any{"a", 1.0}, `["a",1]`},
		{json.RawMessage(`{"a":1}`), `{"a":1}`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}
