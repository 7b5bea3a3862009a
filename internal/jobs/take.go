package jobs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// take sets *port to adapter seen as the port P a job declares in its file,
// or says what the adapter lacks. A job whose port the adapters do not serve
// fails when it is built, before its run reads or writes anything; CheckPorts
// finds it when the process starts, and a test builds every job of the
// Registry on the real adapters.
func take[P any](port *P, adapter string, of any) error {
	if p, ok := of.(P); ok {
		*port = p
		return nil
	}
	want := reflect.TypeFor[P]()
	return fmt.Errorf("the %s (%T) does not serve the port %s: %s", adapter, of, want, strings.Join(lacking(want, reflect.TypeOf(of)), ", "))
}

// lacking names the methods of the interface want that have no match on
// have, saying which exist with another signature.
func lacking(want, have reflect.Type) []string {
	var out []string
	for i := range want.NumMethod() {
		m := want.Method(i)
		if have == nil {
			out = append(out, "lacks "+m.Name)
			continue
		}
		got, ok := have.MethodByName(m.Name)
		switch {
		case !ok:
			out = append(out, "lacks "+m.Name)
		case !signatureMatches(m.Type, got.Type):
			out = append(out, fmt.Sprintf("has %s as %s, not %s", m.Name, got.Type, m.Type))
		}
	}
	return out
}

// signatureMatches compares an interface method's type with a concrete
// method's, whose first parameter is the receiver.
func signatureMatches(iface, concrete reflect.Type) bool {
	if concrete.NumIn() != iface.NumIn()+1 || concrete.NumOut() != iface.NumOut() || concrete.IsVariadic() != iface.IsVariadic() {
		return false
	}
	for i := range iface.NumIn() {
		if concrete.In(i+1) != iface.In(i) {
			return false
		}
	}
	for i := range iface.NumOut() {
		if concrete.Out(i) != iface.Out(i) {
			return false
		}
	}
	return true
}

// CheckPorts builds every job of the Registry on p with its default
// settings, and the retention step every run ends with, and returns what the
// adapters do not serve, naming each job: the
// wiring refuses to start on it, and a test holds the real adapters and the
// fakes to every job.
func CheckPorts(p Ports) error {
	var errs []error
	for _, j := range Registry {
		if _, err := j.kind().build()(p, Pass{Job: j.Name}); err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", j.Name, err))
		}
	}
	_, err := takeRetention(p, hap.Retention{}, NoDryRun)
	errs = append(errs, err)
	return errors.Join(errs...)
}
