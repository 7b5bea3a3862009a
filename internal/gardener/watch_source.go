package gardener

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/kyma-project/hap-reconciler/internal/gardener/wire"
)

// watchSource lists and watches one kind for a reflector. Pages and events
// are decoded straight into the small cached objects, so no full Gardener
// object is ever built, and it tracks whether the cache may be read.
type watchSource struct {
	client *Client
	res    resource
	// list pages through the kind, returning the cached objects and the
	// list's resourceVersion.
	list func(ctx context.Context) ([]runtime.Object, string, error)
	// decode turns a watch event's object, encoded in format, into a
	// cached object.
	decode func(format wire.Format, raw []byte) (runtime.Object, error)
	health *health
	// watchTimeout, when not 0, replaces the timeout the reflector asks
	// each watch to last.
	watchTimeout time.Duration
}

// ListWithContext is the reflector's (re)list: every page, always a
// consistent list from the API server, whatever options the reflector asks
// for. Until the list is done and a watch runs on top of it, the cache is
// not to be read: it still holds the previous picture, now stale.
func (s *watchSource) ListWithContext(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	s.health.notReady(s.health.generation(), errors.New("listing"))
	items, resourceVersion, err := s.list(ctx)
	if err != nil {
		// Explained as a run's list is: a refused token says so here too.
		err = s.client.explain(err, s.res.name, true)
		s.health.refused(s.health.generation(), err)
		return nil, err
	}
	return &cachedList{ListMeta: metav1.ListMeta{ResourceVersion: resourceVersion}, Items: items}, nil
}

// WatchWithContext opens a watch from options.ResourceVersion. The reflector
// calls it only once its store holds a complete list, or to resume after a
// watch closed, from the last event it applied; so an open watch means the
// cache is whole and following the API server.
func (s *watchSource) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	gen := s.health.nextGeneration()
	req := s.res.client.Get().Namespace(s.client.namespace).Resource(s.res.name).
		Param("watch", "true").
		Param("resourceVersion", options.ResourceVersion).
		Param("allowWatchBookmarks", strconv.FormatBool(options.AllowWatchBookmarks))
	if s.watchTimeout > 0 {
		seconds := int64(s.watchTimeout / time.Second)
		options.TimeoutSeconds = &seconds
	}
	if options.TimeoutSeconds != nil {
		req = req.Param("timeoutSeconds", strconv.FormatInt(*options.TimeoutSeconds, 10))
	}
	streamCtx, response := wire.WithContentTypeSlot(ctx)
	body, err := req.Stream(streamCtx)
	if err == nil {
		var format wire.Format
		if format, err = response.Format(); err == nil {
			s.health.ready(gen)
			return s.watching(ctx, gen, format, body), nil
		}
		_ = body.Close()
	}
	err = fmt.Errorf("watch %s in namespace %s: %w", s.res.name, s.client.namespace, err)
	s.health.notReady(gen, err)
	return nil, err
}

// watching hands the events of an open watch's body to the reflector.
func (s *watchSource) watching(ctx context.Context, gen uint64, format wire.Format, body io.ReadCloser) watch.Interface {
	d := &eventDecoder{body: body, format: format, events: wire.NewEventReader(format, body), decode: s.decode, ended: func(err error) {
		s.health.notReady(gen, fmt.Errorf("watch of %s ended: %w", s.res.name, err))
	}}
	reporter := apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")
	return watch.NewStreamWatcherWithLogger(klog.FromContext(ctx), d, reporter)
}

// List and Watch complete cache.ListerWatcher, which the reflector's
// constructor asks for; the reflector itself calls the context forms above.
func (s *watchSource) List(options metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), options)
}

func (s *watchSource) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), options)
}

// eventDecoder reads the API server's watch stream, one event after the
// other, in either format (wire/events.go).
type eventDecoder struct {
	body   io.ReadCloser
	format wire.Format
	events wire.EventReader
	decode func(format wire.Format, raw []byte) (runtime.Object, error)
	// ended is told why the stream stopped delivering events.
	ended func(error)
}

func (d *eventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	eventType, raw, err := d.events.Next()
	if err != nil {
		d.ended(err)
		return "", nil, err
	}
	switch eventType {
	case watch.Error:
		// Typically 410 Gone: the resourceVersion to resume from was
		// compacted away. The reflector lists again.
		status, err := wire.DecodeStatus(d.format, raw)
		if err != nil {
			d.ended(err)
			return "", nil, fmt.Errorf("decode watch error: %w", err)
		}
		d.ended(apierrors.FromObject(status))
		return watch.Error, status, nil
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		obj, err := d.decode(d.format, raw)
		if err != nil {
			d.ended(err)
			return "", nil, err
		}
		return eventType, obj, nil
	}
	err = fmt.Errorf("unknown watch event type %q", eventType)
	d.ended(err)
	return "", nil, err
}

func (d *eventDecoder) Close() { _ = d.body.Close() }

// health says whether a kind's cache may be read: it was filled by a
// complete list and the watch on top of it is open. Each watch has a
// generation, so a stale stream ending late cannot mark a newer one broken.
type health struct {
	resource string
	onChange func(resource string, err error)

	mu      sync.Mutex
	gen     uint64
	isReady bool
	stopped bool
	// why tells why the cache is not ready; nil when it is.
	why     error
	changed chan struct{}
	// refusal is the last list failure reported, so a list the reflector
	// retries with the same failure is reported once, not every second.
	refusal string
}

func newHealth(resource string, onChange func(resource string, err error)) *health {
	return &health{resource: resource, onChange: onChange, why: errors.New("not listed yet"), changed: make(chan struct{})}
}

func (h *health) generation() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen
}

func (h *health) nextGeneration() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	return h.gen
}

func (h *health) ready(gen uint64) { h.set(gen, true, nil) }

func (h *health) notReady(gen uint64, why error) { h.set(gen, false, why) }

// refused marks the cache not ready because a list failed, and reports the
// failure even when the cache was not ready before (the first fill, a
// refill), each distinct failure once: an operator otherwise sees nothing
// while a rejected token keeps the first fill from ever completing.
func (h *health) refused(gen uint64, why error) {
	h.mu.Lock()
	was := h.isReady
	report := !was && h.refusal != why.Error()
	h.refusal = why.Error()
	h.mu.Unlock()
	h.set(gen, false, why)
	if report && h.onChange != nil {
		h.onChange(h.resource, why)
	}
}

// isStopped reports whether the cache is never to be read again.
func (h *health) isStopped() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopped
}

// stop marks the cache as never to be read again.
func (h *health) stop() {
	h.mu.Lock()
	h.stopped = true
	h.mu.Unlock()
	h.set(h.generation(), false, ErrWatchStopped)
}

func (h *health) set(gen uint64, ready bool, why error) {
	h.mu.Lock()
	if gen != h.gen || (h.stopped && ready) {
		h.mu.Unlock()
		return
	}
	was := h.isReady
	h.isReady, h.why = ready, why
	if ready {
		h.refusal = ""
	}
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	if h.onChange != nil && was != ready {
		h.onChange(h.resource, why)
	}
}

// wait returns once the cache may be read, or why it may not when it does
// not become readable before ctx ends.
func (h *health) wait(ctx context.Context) error {
	for {
		h.mu.Lock()
		ready, stopped, why, changed := h.isReady, h.stopped, h.why, h.changed
		h.mu.Unlock()
		switch {
		case ready:
			return nil
		case stopped:
			return fmt.Errorf("%s: %w", h.resource, ErrWatchStopped)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			// why is wrapped, so its hint reaches whoever prints the error.
			return fmt.Errorf("%s cache is not in sync with the API server: %w: %w", h.resource, ctx.Err(), why)
		}
	}
}
