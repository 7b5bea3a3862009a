package exportfile

// Objects as the Gardener API serves them, the same as internal/gardener's
// tests create: an export holds what the API client lists.

func shootFixture(name string, labels map[string]any, spec map[string]any) map[string]any {
	spec["region"] = "eu-central-1"
	spec["provider"] = map[string]any{"type": "aws", "workers": []any{map[string]any{"name": "cpu-worker-0", "minimum": 3}}}
	return map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1",
		"kind":       "Shoot",
		"metadata":   map[string]any{"name": name, "labels": labels},
		"spec":       spec,
		"status":     map[string]any{"technicalID": "shoot--kyma--" + name},
	}
}

func bindingFixture(name string, labels map[string]any) map[string]any {
	return map[string]any{
		"apiVersion":     "security.gardener.cloud/v1alpha1",
		"kind":           "CredentialsBinding",
		"metadata":       map[string]any{"name": name, "labels": labels},
		"provider":       map[string]any{"type": "aws"},
		"credentialsRef": map[string]any{"apiVersion": "v1", "kind": "Secret", "name": name},
	}
}
