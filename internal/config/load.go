package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/hap-reconciler/internal/jobs"
	"github.com/kyma-project/hap-reconciler/internal/setting"
)

// Load reads the file at path over the defaults and validates the result.
// An empty path means the defaults alone. It does not look at the
// environment; LoadWithEnv does.
func Load(path string) (Config, error) { return load(path, false) }

// LoadWithEnv is Load, plus KEB's own variables from the process
// environment, read by KEB's own parser (envconfig, kebConfig): its
// multi-account settings (APP_HAP_MULTI_HYPERSCALER_ACCOUNT_...) when the
// file has no hap.multiHyperscalerAccount block (both at once are refused),
// its default trial provider and its rule file.
func LoadWithEnv(path string) (Config, error) { return load(path, true) }

func load(path string, withEnv bool) (Config, error) {
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
	if withEnv {
		if err := applyKEBsVariables(&cfg); err != nil {
			return cfg, err
		}
	}
	if err := cfg.Resolve(); err != nil {
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

// applyKEBsVariables applies what KEB's variables say, read as KEB reads
// them.
func applyKEBsVariables(cfg *Config) error {
	keb, err := readKEBConfig()
	if err != nil {
		return err
	}
	if err := applyEnv(cfg, keb); err != nil {
		return err
	}
	applyTrialProvider(cfg, keb)
	return applyRuleFile(cfg, keb)
}

// applyEnv takes KEB's multi-account variables when the file has no block.
func applyEnv(cfg *Config, keb kebConfig) error {
	r := &hapReader{}
	warnChartOnlyVariables(r)
	cfg.Warnings = append(cfg.Warnings, r.warnings...)
	r.warnings = nil
	set := kebVariablesSet()
	if len(set) == 0 {
		return nil
	}
	if cfg.HAP.MultiHyperscalerAccount != nil {
		return &Error{Key: multiAccountKey, Reason: fmt.Sprintf("is set both in %s and by KEB's environment variables %s; use one",
			cfg.PolicySource, strings.Join(set, ", "))}
	}
	m, err := multiAccountFromEnv(keb, r)
	if err != nil {
		return err
	}
	cfg.HAP.MultiHyperscalerAccount = m
	cfg.PolicySource = environmentSource(set)
	cfg.Warnings = append(cfg.Warnings, r.warnings...)
	return nil
}

// Parse applies a YAML document to cfg, read once into its typed structs:
// the file's own keys (Config) and the jobs' sections (jobs.Setup: the
// schedules, retention and each job's own section, typed beside the job).
// The job's own keys are strict: unknown keys and values of the wrong type
// are refused with the key's full path and the value. KEB's `hap` block is
// read as KEB's values: what the job does not apply as written is added to
// cfg.Warnings. Parse checks no value: Resolve does, once the environment
// is applied too.
func Parse(doc []byte, cfg *Config) error {
	cfg.resolved = false
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
	if _, ok := tree.(map[string]any); !ok {
		return invalid("(file)", tree, "the document must be a mapping of keys")
	}
	// The file's schedules are its own: a copy of cfg made before keeps
	// the map it had.
	cfg.Jobs.Schedules = maps.Clone(cfg.Jobs.Schedules)
	r := &hapReader{}
	policyInFile := false
	readHAP := jsonv2.UnmarshalFunc(func(node []byte, h *HAPValues) error {
		var block any
		if err := json.Unmarshal(node, &block); err != nil {
			return err
		}
		read, err := r.readHAP(block)
		*h, policyInFile = read, read.MultiHyperscalerAccount != nil
		return err
	})
	file := struct {
		*Config
		*jobs.Setup
	}{cfg, &cfg.Jobs}
	if err := setting.Decode(js, &file, jsonv2.WithUnmarshalers(readHAP)); err != nil {
		return err
	}
	cfg.Warnings = append(cfg.Warnings, r.warnings...)
	if policyInFile {
		cfg.PolicySource = SourceFile
	}
	return nil
}
