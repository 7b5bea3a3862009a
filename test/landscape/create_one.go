package landscape

import (
	"context"
	"fmt"

	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"

	"github.com/kyma-project/hap-reconciler/test/testbed"
)

// CreateShoot creates s, a shoot added to a landscape already loaded into
// namespace, the way LoadWorld loaded the others: on the real
// gardener-apiserver through admission, after the CloudProfile admission
// looks up; on the CRD bed as generated.
func CreateShoot(ctx context.Context, kube *testbed.Kube, namespace string, s *Shoot) error {
	c, err := newCreator(kube.Config(), namespace)
	if err != nil {
		return err
	}
	if kube.ServesGardenerAPIServer() {
		profiles := c.host + "/" + gardenerPath + "/cloudprofiles"
		if err := c.createOnce(ctx, profiles, cloudProfile(s.Object.Spec.Provider.Type)); err != nil {
			return err
		}
		return c.createAdmittedShoot(ctx, s)
	}
	body, err := encodeShoot(s)
	if err != nil {
		return fmt.Errorf("shoot %s: %w", s.Object.Name, err)
	}
	return c.create(ctx, gardenerPath, "shoots", s.Object.Name, body, s.Deleting)
}

// CreateBinding creates b, a binding added to a landscape already loaded
// into namespace: on the real gardener-apiserver after the Secret admission
// looks up.
func CreateBinding(ctx context.Context, kube *testbed.Kube, namespace string, b *securityv1alpha1.CredentialsBinding) error {
	c, err := newCreator(kube.Config(), namespace)
	if err != nil {
		return err
	}
	if kube.ServesGardenerAPIServer() {
		if err := c.createOnce(ctx, c.collection(corePath, "secrets"), providerSecret(b.CredentialsRef.Name)); err != nil {
			return err
		}
		return c.admitted(ctx, func() error { return c.createBinding(ctx, b) })
	}
	return c.createBinding(ctx, b)
}
