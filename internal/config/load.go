package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
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

func invalid(key string, value any, format string, args ...any) *Error {
	return &Error{Key: key, Value: quote(value), Reason: fmt.Sprintf(format, args...)}
}

func quote(v any) string {
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

// Load reads the file at path over the defaults and validates the result.
// An empty path means the defaults alone. It does not look at the
// environment; LoadWithEnv does.
func Load(path string) (Config, error) { return LoadWithEnv(path, nil) }

// LoadWithEnv is Load, plus KEB's own variables for its multi-account
// settings (APP_HAP_MULTI_HYPERSCALER_ACCOUNT_..., read as KEB reads them)
// when the file has no hap.multiHyperscalerAccount block. Both at once are
// refused. getenv returns "" for a variable that is not set; nil means an
// empty environment.
func LoadWithEnv(path string, getenv func(string) string) (Config, error) {
	cfg := Default()
	if path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return cfg, &Error{Key: "--config", Value: fmt.Sprintf("%q", path), Reason: fmt.Sprintf("cannot read the file (%v)", errors.Unwrap(err))}
		}
		if err := Parse(raw, &cfg); err != nil {
			return cfg, err
		}
		if cfg.PolicySource == SourceFile {
			cfg.PolicySource = SourceFile + " " + path
		}
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return cfg, err
	}
	applyTrialProvider(&cfg, getenv)
	if err := applyRuleFile(&cfg, getenv); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	cfg.Warnings = append(cfg.Warnings, cfg.ruleWarnings()...)
	return cfg, nil
}

// Where the multi-account settings came from (Config.PolicySource).
const (
	SourceFile        = "file"
	SourceEnvironment = "environment"
)

// applyEnv takes KEB's multi-account variables when the file has no block.
func applyEnv(cfg *Config, getenv func(string) string) error {
	r := &hapReader{}
	warnChartOnlyVariables(getenv, r)
	cfg.Warnings = append(cfg.Warnings, r.warnings...)
	r.warnings = nil
	set := kebVariablesSet(getenv)
	if len(set) == 0 {
		return nil
	}
	if cfg.HAP.MultiHyperscalerAccount != nil {
		return &Error{Key: multiAccountKey, Reason: fmt.Sprintf("is set both in %s and by KEB's environment variables %s; use one",
			cfg.PolicySource, strings.Join(set, ", "))}
	}
	m, err := multiAccountFromEnv(getenv, r)
	if err != nil {
		return err
	}
	cfg.HAP.MultiHyperscalerAccount = m
	cfg.PolicySource = environmentSource(set)
	cfg.Warnings = append(cfg.Warnings, r.warnings...)
	return nil
}

// Parse applies a YAML document to cfg. The job's own keys are strict:
// unknown keys and values of the wrong type are refused with the key's full
// path. KEB's `hap` block is read as KEB's values: what the job does not
// apply as written is added to cfg.Warnings.
func Parse(doc []byte, cfg *Config) error {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return &Error{Key: "(file)", Reason: fmt.Sprintf("not valid YAML: %v", err)}
	}
	var tree any
	if err := json.Unmarshal(js, &tree); err != nil {
		return &Error{Key: "(file)", Reason: fmt.Sprintf("not valid YAML: %v", err)}
	}
	if tree == nil {
		return nil // an empty file: defaults
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return invalid("(file)", tree, "the document must be a mapping of keys")
	}
	if node, ok := top["hap"]; ok {
		r := &hapReader{}
		h, err := r.readHAP(node)
		if err != nil {
			return err
		}
		cfg.HAP = h
		cfg.Warnings = append(cfg.Warnings, r.warnings...)
		if h.MultiHyperscalerAccount != nil {
			cfg.PolicySource = SourceFile
		}
		rest := maps.Clone(top)
		delete(rest, "hap")
		if js, err = json.Marshal(rest); err != nil {
			return &Error{Key: "(file)", Reason: err.Error()}
		}
		tree = rest
	}
	if err := checkKeys(reflect.TypeOf(*cfg), tree, ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := dec.Decode(cfg); err != nil {
		var typeErr *json.UnmarshalTypeError
		var cfgErr *Error
		switch {
		case errors.As(err, &cfgErr):
			return cfgErr
		case errors.As(err, &typeErr):
			return invalid(typeErr.Field, lookup(tree, typeErr.Field), "must be %s", typeName(typeErr.Type))
		}
		return &Error{Key: "(file)", Reason: err.Error()}
	}
	return nil
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
		return invalid(strings.TrimPrefix(path, "."), node, "must be a mapping")
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			fields[name] = t.Field(i).Type
		}
	}
	for key, value := range m {
		ft, known := fields[key]
		at := strings.TrimPrefix(path+"."+key, ".")
		if !known {
			if strings.TrimSpace(key) == "" {
				// Quoted, or the message would name no key at all.
				at = strings.TrimPrefix(path+"."+strconv.Quote(key), ".")
			}
			return &Error{Key: at, Reason: "unknown key"}
		}
		if err := checkKeys(ft, value, path+"."+key); err != nil {
			return err
		}
	}
	return nil
}

func lookup(tree any, path string) any {
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
