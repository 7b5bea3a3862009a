package gardener

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/hap-reconciler/internal/hint"
)

func TestTheClientSaysWhatToCheckForTheFailuresAnOperatorMeets(t *testing.T) {
	c, err := NewClient(&rest.Config{Host: "https://garden.example"}, "garden-kyma", 0)
	if err != nil {
		t.Fatal(err)
	}
	shoots := schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name string
		err  error
		list bool
		want string // empty: no hint
	}{
		{"forbidden", apierrors.NewForbidden(shoots, "", errors.New("no RBAC")), true,
			`no access to shoots in Gardener project namespace "garden-kyma": check that the job's identity`},
		{"unauthorized", apierrors.NewUnauthorized("expired"), true,
			"Gardener at https://garden.example rejected the job's credentials: check that the kubeconfig's token"},
		{"kind not served", apierrors.NewNotFound(shoots, ""), true,
			"Gardener at https://garden.example does not serve shoots: check that the kubeconfig points at the Gardener API"},
		{"binding not found on a get", apierrors.NewNotFound(shoots, "b-1"), false, ""},
		{"connection refused", fmt.Errorf("list shoots: %w", refused), true,
			"cannot reach Gardener at https://garden.example: check the server address in the kubeconfig"},
		{"no such host", &net.DNSError{Err: "no such host", Name: "garden.example", IsNotFound: true}, true,
			"cannot reach Gardener at https://garden.example"},
		{"cancelled", fmt.Errorf("list: %w", context.Canceled), true, ""},
		{"already explained", hint.New(errors.New("x"), "check this"), true, "check this"},
	} {
		got := c.explain(tc.err, "shoots", tc.list)
		h, ok := hint.Of(got)
		switch {
		case tc.want == "" && (ok || got != tc.err):
			t.Errorf("%s: %v, want the error unchanged", tc.name, got)
		case tc.want != "" && (!ok || !strings.HasPrefix(h, tc.want)):
			t.Errorf("%s: hint %q, want it to start %q", tc.name, h, tc.want)
		case !errors.Is(got, tc.err):
			t.Errorf("%s: %v hides its cause", tc.name, got)
		}
	}
}
