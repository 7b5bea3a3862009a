package kebrules

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/hap-reconciler/provisioning"
)

// Gardener is KEB's Gardener client as the read path's confirmation asks
// it (GetCredentialsBinding, GetCredentialsBindings of common/gardener):
// the live bindings of the API server, read as unstructured objects.
func (k *KEB) Gardener() provisioning.Gardener { return gardenerOf{k} }

type gardenerOf struct{ k *KEB }

func (g gardenerOf) CredentialsBinding(ctx context.Context, name string) (provisioning.Binding, bool, error) {
	u, err := g.k.Bindings.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return provisioning.Binding{}, false, nil
	case err != nil:
		return provisioning.Binding{}, false, fmt.Errorf("get binding %s: %w", name, err)
	}
	return bindingOf(*u), true, nil
}

func (g gardenerOf) CredentialsBindings(ctx context.Context, selector string) ([]provisioning.Binding, error) {
	items, err := g.k.List(ctx, selector)
	if err != nil {
		return nil, err
	}
	out := make([]provisioning.Binding, len(items))
	for i, it := range items {
		out[i] = bindingOf(it)
	}
	return out, nil
}

func bindingOf(u unstructured.Unstructured) provisioning.Binding {
	provider, _, _ := unstructured.NestedString(u.Object, "provider", "type")
	return provisioning.Binding{Name: u.GetName(), Labels: u.GetLabels(), ProviderType: provider}
}
