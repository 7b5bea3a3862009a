package hap

import "testing"

func TestAPictureIsImplausibleWhenGardenerListsFarFewerBindingsThanKEBsDatabaseUses(t *testing.T) {
	for _, c := range []struct {
		name        string
		f           *fleet
		implausible bool
	}{
		{"nothing anywhere", new(fleet), false},
		{"a sound pool", new(fleet).binding("b", "ga", awsPool).clusters("b", "ga", 3), false},
		{"free bindings, no instance", new(fleet).binding("b", "", awsPool), false},
		{"a wrong namespace: no binding listed", new(fleet).instances("b", "ga", 3), true},
		{"a wrong namespace with bindings of its own", new(fleet).binding("other", "", awsPool).instances("b", "ga", 3), true},
		{"one binding of many gone: drift, not a wrong namespace",
			new(fleet).binding("b", "ga", awsPool).clusters("b", "ga", 3).instances("gone", "ga", 1), false},
		{"most instances on bindings Gardener lacks",
			new(fleet).binding("b", "ga", awsPool).clusters("b", "ga", 1).instances("gone", "ga", 2), true},
	} {
		if why := Implausible(c.f.tally()); (why != "") != c.implausible {
			t.Errorf("%s: implausible %q, want implausible=%v", c.name, why, c.implausible)
		}
	}
}
