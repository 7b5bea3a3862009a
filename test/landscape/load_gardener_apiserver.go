package landscape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"k8s.io/client-go/rest"
)

// admissionLagTimeout bounds how long a create refused for a missing object
// is tried again. gardener-apiserver's admission looks objects up in its
// informers' caches, which see an object created a moment ago a moment
// later.
const admissionLagTimeout = 30 * time.Second

// finalizerPatch gives a shoot Gardener's finalizer.
var finalizerPatch = []byte(`{"metadata":{"finalizers":["` + gardenerFinalizer + `"]}}`)

// LoadGardenerAPIServer loads l into namespace on the real gardener-apiserver
// (the test bed's default), which must exist. It first creates what
// admission looks up: the Project owning the namespace, a CloudProfile per
// provider type, the Secret of each binding and of the shoots' DNS provider,
// and a SecretBinding beside the CredentialsBinding of each shoot that names
// its binding the legacy way. Then the bindings, then the shoots.
//
// Each shoot is created as generated except for three fields: spec.seedName
// (it names a Seed, which only Gardener's scheduler picks), the
// kube-apiserver's oidcConfig (refused from Kubernetes 1.32 on) and
// spec.resources (admission reads each object referenced there live, through
// a client held to five requests a second: minutes for a large landscape).
// Its status is then written through the status subresource, which a create
// ignores, so shoots are as large as production's. A shoot loaded as being
// deleted gets Gardener's finalizer by a patch (Gardener refuses it on
// create) before it is deleted. A shoot on a binding the landscape lacks
// (credentialsBindingName) is created on a stand-in binding of that name,
// which is deleted once every shoot is in: with no gardener-controller-manager
// to hold it by its finalizer, the shoot then names a binding that is gone,
// as one whose finalizer was removed by hand does. progress, when not nil,
// counts bindings and shoots.
func LoadGardenerAPIServer(ctx context.Context, cfg *rest.Config, namespace string, l *Landscape, progress func(done, total int)) error {
	c, err := newCreator(cfg, namespace)
	if err != nil {
		return err
	}
	if err := c.createAdmissionFixtures(ctx, l); err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	if err := c.createSecretBindings(ctx, l); err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	bindings, total := len(l.Bindings), len(l.Bindings)+len(l.Shoots)
	// Bindings before shoots: admission refuses a shoot whose binding it
	// cannot find.
	err = runParallel(ctx, bindings, loadWorkers, func(ctx context.Context, i int) error {
		return c.admitted(ctx, func() error { return c.createBinding(ctx, l.Bindings[i]) })
	}, counted(progress, 0, total))
	if err != nil {
		return err
	}
	ghosts := l.ghostBindings()
	for _, g := range ghosts {
		if err := c.createGhost(ctx, g); err != nil {
			return err
		}
	}
	err = runParallel(ctx, len(l.Shoots), loadWorkers, func(ctx context.Context, i int) error {
		return c.createAdmittedShoot(ctx, l.Shoots[i])
	}, counted(progress, bindings, total))
	if err != nil {
		return err
	}
	for _, g := range ghosts {
		if err := c.markDeleted(ctx, c.collection(securityPath, "credentialsbindings"), "credentialsbindings", g.Name); err != nil {
			return fmt.Errorf("load landscape: %w", err)
		}
	}
	return nil
}

// createGhost creates a stand-in binding and its Secret.
func (c creator) createGhost(ctx context.Context, b *securityv1alpha1.CredentialsBinding) error {
	if err := c.createOnce(ctx, c.collection(corePath, "secrets"), providerSecret(b.Name)); err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	return c.admitted(ctx, func() error { return c.createBinding(ctx, b) })
}

// ghostBindings are stand-ins for the bindings shoots name in
// spec.credentialsBindingName that the landscape lacks, each once, with
// the provider type of the first shoot naming it.
func (l *Landscape) ghostBindings() []*securityv1alpha1.CredentialsBinding {
	var ghosts []*securityv1alpha1.CredentialsBinding
	seen := map[string]bool{}
	for _, s := range l.Shoots {
		name := ""
		if n := s.Object.Spec.CredentialsBindingName; n != nil {
			name = *n
		}
		if name == "" || seen[name] || l.Binding(name) != nil {
			continue
		}
		seen[name] = true
		ghosts = append(ghosts, ghostBinding(name, s.Object.Spec.Provider.Type))
	}
	return ghosts
}

// counted reports one phase's progress as part of the whole load's.
func counted(progress func(done, total int), before, total int) func(done, _ int) {
	if progress == nil {
		return nil
	}
	return func(done, _ int) { progress(before+done, total) }
}

func (c creator) createAdmittedShoot(ctx context.Context, s *Shoot) error {
	name := s.Object.Name
	body, status, err := encodeAdmittedShoot(s, c.namespace)
	if err != nil {
		return fmt.Errorf("shoot %s: %w", name, err)
	}
	if err := c.admitted(ctx, func() error { return c.create(ctx, gardenerPath, "shoots", name, body, false) }); err != nil {
		return err
	}
	collection := c.collection(gardenerPath, "shoots")
	if err := c.do(ctx, http.MethodPatch, collection+"/"+url.PathEscape(name)+"/status", mergePatchBody, status, http.StatusOK); err != nil {
		return fmt.Errorf("write status of shoot %s: %w", name, err)
	}
	if !s.Deleting {
		return nil
	}
	// Gardener refuses its finalizer on create; a shoot gets it once it
	// exists, as gardener-controller-manager adds it.
	if err := c.do(ctx, http.MethodPatch, collection+"/"+url.PathEscape(name), mergePatchBody, finalizerPatch, http.StatusOK); err != nil {
		return fmt.Errorf("add the finalizer to shoot %s: %w", name, err)
	}
	return c.markDeleted(ctx, collection, "shoots", name)
}

// createAdmissionFixtures creates what admission looks up for bindings and
// shoots, in the order it needs them (an object is only looked up by objects
// created after it): the Project, the CloudProfiles and the Secrets. The
// legacy SecretBindings come after them (createSecretBindings).
func (c creator) createAdmissionFixtures(ctx context.Context, l *Landscape) error {
	projects := c.host + "/" + gardenerPath + "/projects"
	if err := c.createOnce(ctx, projects, project(c.namespace)); err != nil {
		return err
	}
	for _, providerType := range l.providerTypes() {
		if err := c.createOnce(ctx, c.host+"/"+gardenerPath+"/cloudprofiles", cloudProfile(providerType)); err != nil {
			return err
		}
	}
	secrets := c.collection(corePath, "secrets")
	names := []string{dnsSecretName}
	for _, b := range l.Bindings {
		names = append(names, b.CredentialsRef.Name)
	}
	return runParallel(ctx, len(names), loadWorkers, func(ctx context.Context, i int) error {
		return c.createOnce(ctx, secrets, providerSecret(names[i]))
	}, nil)
}

// createSecretBindings creates, through admission, the SecretBinding of each
// shoot that names its binding the legacy way. Admission looks up each one's
// Secret through a client held to five requests a second, so at the
// benchmark's sizes the seeder stores them instead (seeder.secretBinding).
func (c creator) createSecretBindings(ctx context.Context, l *Landscape) error {
	secretBindings := c.collection(gardenerPath, "secretbindings")
	legacy, err := l.legacySecretBindings(c.namespace)
	if err != nil {
		return err
	}
	for _, b := range legacy {
		if err := c.admitted(ctx, func() error { return c.createOnce(ctx, secretBindings, b) }); err != nil {
			return err
		}
	}
	return nil
}

// createOnce creates obj in collection, an object of that name being there
// already (a CloudProfile another world created) counting as done.
func (c creator) createOnce(ctx context.Context, collection string, obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	err = c.do(ctx, http.MethodPost, collection, jsonBody, body, http.StatusCreated)
	var status *statusError
	if errors.As(err, &status) && status.code == http.StatusConflict {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create in %s: %w", collection, err)
	}
	return nil
}

// admitted calls create until admission stops refusing it for an object it
// cannot find yet, or admissionLagTimeout passes. Any other error is final.
func (c creator) admitted(ctx context.Context, create func() error) error {
	ctx, cancel := context.WithTimeout(ctx, admissionLagTimeout)
	defer cancel()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		err := create()
		if err == nil || !refusedForMissingObject(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-ticker.C:
		}
	}
}

// refusedForMissingObject reports an admission refusal naming an object that
// is not found, the way gardener-apiserver words a failed lister lookup: 403
// or 404 for most plugins, 500 for the shoot validator's CloudProfile
// ("Internal error occurred: could not find referenced cloud profile").
func refusedForMissingObject(err error) bool {
	var status *statusError
	if !errors.As(err, &status) {
		return false
	}
	switch status.code {
	case http.StatusForbidden, http.StatusNotFound, http.StatusInternalServerError:
		return strings.Contains(string(status.answer), "not found")
	}
	return false
}

// providerTypes are the provider types of the landscape's shoots, each
// naming the CloudProfile of that name.
func (l *Landscape) providerTypes() []string {
	var types []string
	for _, s := range l.Shoots {
		if t := s.Object.Spec.Provider.Type; !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	return types
}

// legacySecretBindings are the SecretBindings the shoots name in
// spec.secretBindingName, each once, in namespace: each beside the
// CredentialsBinding of its name, on the same account.
func (l *Landscape) legacySecretBindings(namespace string) ([]*gardencorev1beta1.SecretBinding, error) {
	var legacy []*gardencorev1beta1.SecretBinding
	seen := map[string]bool{}
	bindings := make(map[string]*securityv1alpha1.CredentialsBinding, len(l.Bindings))
	for _, b := range l.Bindings {
		bindings[b.Name] = b
	}
	for _, s := range l.Shoots {
		n := s.Object.Spec.SecretBindingName
		if n == nil || *n == "" || seen[*n] {
			continue
		}
		seen[*n] = true
		b := bindings[*n]
		if b == nil {
			return nil, fmt.Errorf("a shoot names secret binding %s, which the landscape lacks: Gardener admits no such shoot", *n)
		}
		legacy = append(legacy, secretBinding(*n, namespace, b.Provider.Type))
	}
	return legacy, nil
}
