// Package setting holds what the configuration file's reader
// (internal/config) and the jobs, which own their sections of it
// (internal/jobs), share: the configuration error that names a key and its
// value, the duration as the file writes it, and the strict reading of the
// file into its typed structs.
package setting

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Error is a configuration error naming the key and the offending value.
// The CLI exits with status 2 on it.
type Error struct {
	Key    string
	Value  string
	Reason string
}

func (e *Error) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("invalid configuration: %s: %s", e.Key, e.Reason)
	}
	return fmt.Sprintf("invalid configuration: %s: %s, got %s", e.Key, e.Reason, e.Value)
}

// Invalid is the Error for key holding value, quoted as the file writes it.
func Invalid(key string, value any, format string, args ...any) *Error {
	return &Error{Key: key, Value: Quote(value), Reason: fmt.Sprintf(format, args...)}
}

// Quote writes a value as configuration errors and warnings show it: JSON,
// strings quoted.
func Quote(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", v)
	case json.RawMessage:
		return string(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Duration is a time.Duration written as "90s", "1h" or "1h30m".
type Duration struct{ time.Duration }

// errNotADuration is what UnmarshalJSON says of a value that is no Go
// duration string; Decode names the key and the value.
var errNotADuration = errors.New("not a duration")

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errNotADuration
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errNotADuration
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string, so a dumped config reads back.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Decode reads js, the whole configuration file as JSON, into dst over
// what dst already holds, in one pass: dst is the file's typed structs,
// and opts may add readers of its own for a type (the hap block's). It is
// strict: an unknown key and a value of the wrong type are an *Error naming
// the key's whole path and the value as the file writes it. A key left out
// keeps what dst held, and so does a null, as encoding/json has it.
func Decode(js []byte, dst any, opts ...jsonv2.Options) error {
	opts = append([]jsonv2.Options{jsonv2.RejectUnknownMembers(true), jsonv1.MergeWithLegacySemantics(true),
		jsontext.AllowDuplicateNames(true)}, opts...)
	err := jsonv2.Unmarshal(js, dst, opts...)
	if err == nil {
		return nil
	}
	var cfgErr *Error
	if errors.As(err, &cfgErr) {
		return cfgErr
	}
	var semantic *jsonv2.SemanticError
	if !errors.As(err, &semantic) {
		return &Error{Key: "(file)", Reason: err.Error()}
	}
	key := keyAt(semantic.JSONPointer)
	if errors.Is(semantic.Err, jsonv2.ErrUnknownName) {
		return &Error{Key: key, Reason: "unknown key"}
	}
	var tree any
	_ = json.Unmarshal(js, &tree) // js decoded once already: only the value to show is read here
	return Invalid(orFile(key), valueAt(tree, semantic.JSONPointer), "must be %s", expected(semantic))
}

// keyAt writes a JSON pointer as the file's key path: a.b.c, a blank key
// quoted, or the message would name no key at all.
func keyAt(p jsontext.Pointer) string {
	var keys []string
	for tok := range p.Tokens() {
		if strings.TrimSpace(tok) == "" {
			tok = strconv.Quote(tok)
		}
		keys = append(keys, tok)
	}
	return strings.Join(keys, ".")
}

func orFile(key string) string {
	if key == "" {
		return "(file)"
	}
	return key
}

// valueAt is the value at p in tree, the file as encoding/json decodes it.
func valueAt(tree any, p jsontext.Pointer) any {
	for tok := range p.Tokens() {
		switch node := tree.(type) {
		case map[string]any:
			tree = node[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil
			}
			tree = node[i]
		default:
			return nil
		}
	}
	return tree
}

// expected says what the key must hold, from the kind of Go value the
// decoder could not read it into.
func expected(e *jsonv2.SemanticError) string {
	if errors.Is(e.Err, errNotADuration) {
		return "a duration such as 30s, 5m or 1h"
	}
	if e.GoType == nil {
		return "another value"
	}
	switch kind := e.GoType.Kind().String(); kind {
	case "int", "int64":
		return "an integer"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice":
		return "a list"
	case "string":
		return "a string"
	case "map", "struct", "ptr":
		return "a mapping"
	default:
		return kind
	}
}

// Positive refuses a duration that is not positive, naming key and the
// duration.
func Positive(key string, d Duration) error {
	if d.Duration <= 0 {
		return Invalid(key, d.String(), "must be a positive duration")
	}
	return nil
}
