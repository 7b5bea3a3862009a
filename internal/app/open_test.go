package app_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/kyma-project/hap-reconciler/internal/app"
	"github.com/kyma-project/hap-reconciler/internal/config"
)

// A configuration changed by Parse and opened without Resolve would run on
// KEB's policy and rules from before: Open refuses it.
func TestOpenRefusesAConfigurationParsedButNotResolved(t *testing.T) {
	cfg := config.Default()
	doc := "hap:\n  multiHyperscalerAccount:\n    allowedGlobalAccounts: [ga-1]\n    limits:\n      default: 3\n"
	if err := config.Parse([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	in := app.Inputs{Config: cfg, Log: zap.NewNop(), Getenv: func(string) string { return "" }}
	if _, err := app.Open(context.Background(), in, app.Needs{}); err == nil || !strings.Contains(err.Error(), "not resolved") {
		t.Fatalf("Open on a parsed configuration: %v, want it refused as not resolved", err)
	}

	if err := in.Config.Resolve(); err != nil {
		t.Fatal(err)
	}
	env, err := app.Open(context.Background(), in, app.Needs{})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if p := env.Config.Policy(); !p.Allowed["ga-1"] || p.DefaultLimit != 3 {
		t.Errorf("the opened job's policy is %+v, want ga-1 allowed with a default limit of 3", p)
	}
}
