package hap

import (
	"reflect"
	"testing"
)

func TestLabelsKeepEveryLabelInKeyOrder(t *testing.T) {
	m := map[string]string{"tenantName": "ga-1", "hyperscalerType": "aws", "dirty": "", "zz": "last"}
	l := LabelsOf(m)
	want := Labels{{"dirty", ""}, {"hyperscalerType", "aws"}, {"tenantName", "ga-1"}, {"zz", "last"}}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("LabelsOf: %v, want %v", l, want)
	}
	if !reflect.DeepEqual(l.Map(), m) {
		t.Fatalf("Map: %v, want %v", l.Map(), m)
	}
	for key, value := range m {
		if got, ok := l.Get(key); !ok || got != value {
			t.Errorf("Get(%q) = %q, %v; want %q, true", key, got, ok, value)
		}
	}
	for _, absent := range []string{"", "a", "euAccess", "zzz"} {
		if got, ok := l.Get(absent); ok {
			t.Errorf("Get(%q) = %q, true; want absent", absent, got)
		}
	}
	if !l.Equal(LabelsOf(map[string]string{"zz": "last", "dirty": "", "tenantName": "ga-1", "hyperscalerType": "aws"})) {
		t.Error("the same labels in another map order are not Equal")
	}
	if l.Equal(LabelsOf(map[string]string{"dirty": "", "hyperscalerType": "aws", "tenantName": "ga-2", "zz": "last"})) {
		t.Error("labels with another value are Equal")
	}
	if LabelsOf(nil) != nil || LabelsOf(map[string]string{}) != nil || len(Labels(nil).Map()) != 0 || Labels(nil).Map() == nil {
		t.Error("no labels: LabelsOf(nil) and of an empty map must be nil and Map() an empty map")
	}
}
