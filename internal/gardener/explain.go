package gardener

import (
	"context"
	"errors"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kyma-project/hap-reconciler/internal/hint"
)

// explain returns err with what to check (a hint.Error), or err unchanged
// when there is nothing to add: a binding that is not found on a get, say,
// is news for the caller, not a setup problem. resource names the kind the
// request read; list says whether it was a list. The client's lists and
// reads go through here, the watch's lists too, so every Gardener failure
// an operator meets says the same wherever it arose.
func (c *Client) explain(err error, resource string, list bool) error {
	if err == nil || hint.Has(err) || errors.Is(err, context.Canceled) {
		return err
	}
	where := "Gardener"
	if c.host != "" {
		where = "Gardener at " + c.host
	}
	switch {
	case apierrors.IsForbidden(err):
		return hint.New(err, "no access to %s in Gardener project namespace %q: check that the job's identity (the kubeconfig's user or the pod's service account) "+
			"may get, list and watch shoots and credentialsbindings there, and to release, patch credentialsbindings and get the secrets they reference, "+
			"which Gardener's admission asks of whoever changes a binding (the Role of manifests/hap-reconciler/templates/rbac.yaml)", resource, c.namespace)
	case apierrors.IsUnauthorized(err):
		return hint.New(err, "%s rejected the job's credentials: check that the kubeconfig's token or client certificate is valid and not expired", where)
	case list && apierrors.IsNotFound(err):
		return hint.New(err, "%s does not serve %s: check that the kubeconfig points at the Gardener API of the project (the garden cluster), "+
			"not at a shoot or seed cluster, and that it serves core.gardener.cloud/v1beta1 shoots and security.gardener.cloud/v1alpha1 credentialsbindings", where, resource)
	case utilnet.IsConnectionRefused(err) || utilnet.IsNoRoutesError(err) || isDNSFailure(err):
		return hint.New(err, "cannot reach %s: check the server address in the kubeconfig and that the network lets the job through", where)
	}
	return err
}

func isDNSFailure(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns)
}
