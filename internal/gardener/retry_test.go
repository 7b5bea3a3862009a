package gardener

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A 403 for system:anonymous is repeated: the server lost the credentials
// the client sent. A 403 for the job's own user is final, as are a 404 and
// a plain error.
func TestTransientTellsALostIdentityFromARealRefusal(t *testing.T) {
	shoots := schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"anonymous", apierrors.NewForbidden(shoots, "", errors.New(`User "system:anonymous" cannot list resource "shoots"`)), true},
		{"the job's user", apierrors.NewForbidden(shoots, "", errors.New(`User "system:serviceaccount:kcp-system:hap-reconciler" cannot list resource "shoots"`)), false},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), true},
		{"unavailable", apierrors.NewServiceUnavailable("restarting"), true},
		{"not found", apierrors.NewNotFound(shoots, "s-1"), false},
		{"plain", errors.New("bad page"), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("%s: transient = %t, want %t", c.name, got, c.want)
		}
	}
}
