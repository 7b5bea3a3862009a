// Package setting holds what the configuration file's reader
// (internal/config) and the jobs, which own their sections of it
// (internal/jobs), share: the configuration error that names a key and its
// value, the duration as the file writes it, and the strict reading of a
// section into a Go type.
package setting

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
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

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: durationType}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: s, Type: durationType}
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string, so a dumped config reads back.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

var durationType = reflect.TypeOf(durationDoc(""))

// durationDoc only names the expected type in messages.
type durationDoc string

// Decode reads node, a section of the file as encoding/json decodes it
// (maps, lists, strings, float64s, bools, nil), into dst over what dst
// already holds. It is strict: an unknown key and a value of the wrong type
// are an *Error naming the key's whole path, key being the section's own
// path ("" for the whole document).
func Decode(key string, node any, dst any) error {
	if err := checkKeys(reflect.TypeOf(dst), node, key); err != nil {
		return err
	}
	js, err := json.Marshal(node)
	if err != nil {
		return &Error{Key: orFile(key), Reason: err.Error()}
	}
	if err := json.NewDecoder(bytes.NewReader(js)).Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		var cfgErr *Error
		switch {
		case errors.As(err, &cfgErr):
			return cfgErr
		case errors.As(err, &typeErr):
			return Invalid(join(key, typeErr.Field), lookup(node, typeErr.Field), "must be %s", typeName(typeErr.Type))
		}
		return &Error{Key: orFile(key), Reason: err.Error()}
	}
	return nil
}

func join(path, key string) string {
	switch {
	case path == "":
		return key
	case key == "":
		return path
	}
	return path + "." + key
}

func orFile(key string) string {
	if key == "" {
		return "(file)"
	}
	return key
}

// checkKeys walks the document against the struct's json tags so an unknown
// key is reported with its whole path, where encoding/json would only give
// its last segment.
func checkKeys(t reflect.Type, node any, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(Duration{}) {
		return nil
	}
	m, ok := node.(map[string]any)
	if !ok {
		if node == nil {
			return nil
		}
		return Invalid(path, node, "must be a mapping")
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			fields[name] = t.Field(i).Type
		}
	}
	for key, value := range m {
		ft, known := fields[key]
		at := join(path, key)
		if !known {
			if strings.TrimSpace(key) == "" {
				// Quoted, or the message would name no key at all.
				at = join(path, strconv.Quote(key))
			}
			return &Error{Key: at, Reason: "unknown key"}
		}
		if err := checkKeys(ft, value, at); err != nil {
			return err
		}
	}
	return nil
}

func lookup(tree any, path string) any {
	if path == "" {
		return tree
	}
	for _, seg := range strings.Split(path, ".") {
		m, ok := tree.(map[string]any)
		if !ok {
			return nil
		}
		tree = m[seg]
	}
	return tree
}

func typeName(t reflect.Type) string {
	if t == durationType {
		return "a duration such as 30s, 5m or 1h"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Map:
		return "a mapping"
	}
	return t.String()
}

// Positive refuses a duration that is not positive, naming key and the
// duration.
func Positive(key string, d Duration) error {
	if d.Duration <= 0 {
		return Invalid(key, d.String(), "must be a positive duration")
	}
	return nil
}
