package kebrules

import (
	"context"
	"errors"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// ErrPoolEmpty is no free binding left in the pool; KEB's provisioning fails.
var ErrPoolEmpty = errors.New("no free binding in the pool")

// ErrClaimConflicts is another replica taking the binding first, ClaimAttempts
// times in a row; KEB's step fails and is retried.
var ErrClaimConflicts = errors.New("another replica claimed first every time")

// ClaimAttempts bounds a claim's retries after another replica took the
// same binding first.
const ClaimAttempts = 8

// Claim is KEB's claimNewCredentialsBinding: list the pool's free bindings,
// take the first by name and label it with the GA, the update guarded by
// the resourceVersion it was read at. A conflict means another replica
// claimed it first; KEB's step retries. KEB holds its step's mutex around
// it, one per replica: the caller holds its replica's.
func (k *KEB) Claim(ctx context.Context, ga string, p hap.Pool) (string, error) {
	for range ClaimAttempts {
		free, err := k.List(ctx, ClaimSelector(p))
		if err != nil {
			return "", err
		}
		if len(free) == 0 {
			return "", ErrPoolEmpty
		}
		b := free[0]
		labels := maps.Clone(b.GetLabels())
		labels[labelTenantName] = ga
		err = k.Update(ctx, b, labels)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		return b.GetName(), nil
	}
	return "", fmt.Errorf("claim for %s in %s: %d conflicts: %w", ga, p, ClaimAttempts, ErrClaimConflicts)
}

// Update writes labels guarded by the resourceVersion b was read at, and
// tells Changed of the binding once Gardener took them.
func (k *KEB) Update(ctx context.Context, b unstructured.Unstructured, labels map[string]string) error {
	b.SetLabels(labels)
	_, err := k.Bindings.Update(ctx, &b, metav1.UpdateOptions{})
	if err == nil && k.Changed != nil {
		k.Changed(b.GetName())
	}
	return err
}
