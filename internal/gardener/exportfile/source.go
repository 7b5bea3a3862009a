package exportfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
	"github.com/kyma-project/hap-reconciler/internal/hap"
)

// Source is Gardener as a kubectl export saw it: the shoots and
// credentials bindings of one project namespace, read from files written by
// `kubectl get shoots,credentialsbindings -n NS -o json` (or -o yaml). It
// lets an operator analyse a production snapshot without any access to
// Gardener. It decodes exactly what the API client decodes, so a report on
// an export equals a report on the API at the time of the export; and it
// refuses every write, since an export cannot be changed.
type Source struct {
	files     []string
	namespace string
	shoots    []hap.Shoot
	bindings  []wire.BindingItem
	byName    map[string]int // index into bindings
}

// errNotInExport marks a binding GetBinding did not find in the export.
var errNotInExport = errors.New("not in the export")

// Open reads the export files. namespace, when not empty, is the
// project namespace the objects must come from; when empty, the export's own
// namespace is taken, and it must be one. Every object must be a Shoot or a
// CredentialsBinding, each at most once across all files: an export that
// cannot be read whole is refused rather than half used.
func Open(namespace string, paths ...string) (*Source, error) {
	if len(paths) == 0 {
		return nil, errors.New("no export file given")
	}
	s := &Source{files: paths, namespace: namespace, byName: map[string]int{}}
	seen := map[string]string{} // kind/name -> where first found
	nsWhere := ""
	for _, path := range paths {
		err := readExportFile(path, func(raw []byte, where string) error {
			var obj exportObject
			if err := json.Unmarshal(raw, &obj); err != nil {
				return fmt.Errorf("export file %s: %w", where, err)
			}
			if err := s.checkObject(obj, where, &nsWhere); err != nil {
				return err
			}
			key := obj.Kind + "/" + obj.Metadata.Name
			if first, dup := seen[key]; dup {
				return fmt.Errorf("export file %s: %s %q was already read from %s; give each object once, or it would be counted twice",
					where, obj.Kind, obj.Metadata.Name, first)
			}
			seen[key] = where
			return s.add(obj, raw, where)
		})
		if err != nil {
			return nil, err
		}
	}
	if len(s.shoots) > 0 && len(s.bindings) == 0 {
		return nil, fmt.Errorf("the export files %s hold %d shoot(s) but no credentials binding: export both kinds with kubectl get shoots,credentialsbindings",
			strings.Join(paths, ", "), len(s.shoots))
	}
	return s, nil
}

// checkObject refuses objects of other kinds, without a name, or from a
// namespace other than the project's.
func (s *Source) checkObject(obj exportObject, where string, nsWhere *string) error {
	group, _, _ := strings.Cut(obj.APIVersion, "/")
	switch {
	case obj.Kind == wire.ShootKind && group == wire.ShootsGroupVersion.Group:
	case obj.Kind == wire.CredentialsBindingKind && group == wire.BindingsGroupVersion.Group:
	default:
		return fmt.Errorf("export file %s: kind %q (apiVersion %q) is neither a Shoot (%s) nor a CredentialsBinding (%s); export with kubectl get shoots,credentialsbindings",
			where, obj.Kind, obj.APIVersion, wire.ShootsGroupVersion.Group, wire.BindingsGroupVersion.Group)
	}
	if obj.Metadata.Name == "" {
		return fmt.Errorf("export file %s: %s has no metadata.name", where, obj.Kind)
	}
	ns := obj.Metadata.Namespace
	switch {
	case ns == "" || ns == s.namespace:
	case s.namespace == "":
		s.namespace, *nsWhere = ns, where
	case *nsWhere == "":
		return fmt.Errorf("export file %s: %s %q is in namespace %q, not in %q as asked", where, obj.Kind, obj.Metadata.Name, ns, s.namespace)
	default:
		return fmt.Errorf("export file %s: %s %q is in namespace %q, but %s is in %q; export one project namespace (kubectl get ... -n NS)",
			where, obj.Kind, obj.Metadata.Name, ns, *nsWhere, s.namespace)
	}
	return nil
}

func (s *Source) add(obj exportObject, raw []byte, where string) error {
	if obj.Kind == wire.ShootKind {
		var item wire.ShootItem
		if err := wire.DecodeObject(wire.JSON, raw, &item); err != nil {
			return fmt.Errorf("export file %s, shoot %q: %w", where, obj.Metadata.Name, err)
		}
		s.shoots = append(s.shoots, item.Shoot())
		return nil
	}
	var item wire.BindingItem
	if err := wire.DecodeObject(wire.JSON, raw, &item); err != nil {
		return fmt.Errorf("export file %s, credentials binding %q: %w", where, obj.Metadata.Name, err)
	}
	s.byName[item.Metadata.Name] = len(s.bindings)
	s.bindings = append(s.bindings, item)
	return nil
}

// Namespace is the project namespace the export came from; empty when no
// object named one.
func (s *Source) Namespace() string { return s.namespace }

// Counts tells how many shoots and credentials bindings the export holds.
func (s *Source) Counts() (shoots, bindings int) { return len(s.shoots), len(s.bindings) }

// ListShoots hands every shoot of the export to fn. onReset is never called:
// an export does not change while it is read.
func (s *Source) ListShoots(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	if onReset == nil || fn == nil {
		return errors.New("list shoots: onReset and fn must not be nil")
	}
	for _, shoot := range s.shoots {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(shoot); err != nil {
			return err
		}
	}
	return nil
}

// ListShootsLive is ListShoots: an export has no live side to ask.
func (s *Source) ListShootsLive(ctx context.Context, onReset func(), fn func(hap.Shoot) error) error {
	return s.ListShoots(ctx, onReset, fn)
}

// ListBindings hands every credentials binding of the export to fn, and
// those whose labels a decision could misread to skipped, as the API
// client does.
func (s *Source) ListBindings(ctx context.Context, onReset func(), fn func(hap.Binding) error, skipped func(hap.Skipped)) error {
	if onReset == nil || fn == nil || skipped == nil {
		return errors.New("list credentials bindings: onReset, fn and skipped must not be nil")
	}
	for _, item := range s.bindings {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := item.Deliver(fn, skipped); err != nil {
			return err
		}
	}
	return nil
}

// GetBinding returns the binding as exported; a binding the export lacks is
// an error for which IsNotFound is true.
func (s *Source) GetBinding(_ context.Context, name string) (hap.Binding, error) {
	i, ok := s.byName[name]
	if !ok {
		return hap.Binding{}, fmt.Errorf("credentials binding %q: %w (%s)", name, errNotInExport, strings.Join(s.files, ", "))
	}
	b, err := s.bindings[i].Binding()
	if err != nil {
		return hap.Binding{}, fmt.Errorf("credentials binding %q: %w", name, err)
	}
	return b, nil
}

// errReadOnly refuses every write to an export.
var errReadOnly = errors.New("an export cannot be changed")

// MarkReleased always fails: releasing needs the live API.
func (s *Source) MarkReleased(_ context.Context, name, _, _ string) error {
	return fmt.Errorf("release is refused when reading from --gardener-file: binding %q lives in an export: %w; run against the Gardener API to release", name, errReadOnly)
}

// VoidRelease always fails: an export holds no release to void.
func (s *Source) VoidRelease(_ context.Context, name, _, _ string) error {
	return fmt.Errorf("binding %q lives in an export: %w", name, errReadOnly)
}

// IsRefused reports whether err is a definite refusal of a write; every
// write to an export is one.
func (s *Source) IsRefused(err error) bool { return errors.Is(err, errReadOnly) }

// IsConflict reports whether err is an optimistic-concurrency conflict,
// which an export never produces.
func (s *Source) IsConflict(error) bool { return false }

// IsNotFound reports whether err says a binding is not in the export.
func (s *Source) IsNotFound(err error) bool { return errors.Is(err, errNotInExport) }
