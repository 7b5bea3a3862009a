package landscape

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// loadWorkers bounds parallel creates: enough to keep a local API server
// busy on two cores without queueing most requests in its priority levels.
const loadWorkers = 16

// gardenerFinalizer is the finalizer Gardener keeps on shoots until their
// cluster is gone; a shoot deleted while holding it stays, being deleted.
const gardenerFinalizer = "gardener"

var (
	shootsResource   = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
	bindingsResource = schema.GroupVersionResource{Group: "security.gardener.cloud", Version: "v1alpha1", Resource: "credentialsbindings"}
)

// LoadGardener creates the landscape's bindings and shoots in namespace,
// which must exist. Shoots marked Deleting are created with Gardener's
// finalizer and then deleted, so they carry a deletionTimestamp. progress,
// when not nil, is called after each object from one goroutine at a time.
func LoadGardener(ctx context.Context, cfg *rest.Config, namespace string, l *Landscape, progress func(done, total int)) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000 // the client's limiter would be the bottleneck
	// Gardener's finalizer name is not domain-qualified; the API server's
	// warning about it on every deleting shoot is noise here.
	cfg.WarningHandler = rest.NoWarnings{}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	jobs := make([]func(context.Context) error, 0, len(l.Bindings)+len(l.Shoots))
	for _, b := range l.Bindings {
		obj, err := toUnstructured(b)
		if err != nil {
			return fmt.Errorf("binding %s: %w", b.Name, err)
		}
		// The referenced secret lives in the project namespace.
		if err := unstructured.SetNestedField(obj.Object, namespace, "credentialsRef", "namespace"); err != nil {
			return fmt.Errorf("binding %s: %w", b.Name, err)
		}
		jobs = append(jobs, createJob(client.Resource(bindingsResource).Namespace(namespace), obj, false))
	}
	for _, s := range l.Shoots {
		obj, err := toUnstructured(s.Object)
		if err != nil {
			return fmt.Errorf("shoot %s: %w", s.Object.Name, err)
		}
		if s.Deleting {
			obj.SetFinalizers(append(obj.GetFinalizers(), gardenerFinalizer))
		}
		jobs = append(jobs, createJob(client.Resource(shootsResource).Namespace(namespace), obj, s.Deleting))
	}
	return runParallel(ctx, jobs, progress)
}

// createJob creates obj; with deleteAfter it then deletes it, which a
// finalizer turns into "being deleted".
func createJob(res dynamic.ResourceInterface, obj *unstructured.Unstructured, deleteAfter bool) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := res.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if !deleteAfter {
			return nil
		}
		if err := res.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		return nil
	}
}

// runParallel runs jobs on a bounded pool of workers, stopping at the first
// error.
func runParallel(ctx context.Context, jobs []func(context.Context) error, progress func(done, total int)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan func(context.Context) error)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     int
		firstErr error
	)
	for range loadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range queue {
				err := job(ctx)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if err == nil {
					done++
					if progress != nil {
						progress(done, len(jobs))
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, job := range jobs {
		select {
		case queue <- job:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("load landscape: %w", firstErr)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("load landscape: %w", err)
	}
	return nil
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
