package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/lint"
	"github.com/sandcall/sandcall/tools/openapi"
)

// apiSources are the OpenAPI sources of the configuration (openapi: in
// sandcall.yaml): each loads on its own, in the background, and its tools
// join the catalog once it is loaded, so that a spec behind a slow or
// unreachable URL delays nothing. A call to a tool of a source still
// loading waits for it (pending); a source that failed says why
// (unavailable, notes).
type apiSources struct {
	mu      sync.Mutex
	loading map[string]chan struct{} // by source name: closed once its tools are in the catalog, or it failed
	failed  map[string]error
	loaded  []*openapi.Source
	cancel  context.CancelFunc
}

// apiCallWait bounds how long a call to a tool of a source still loading
// waits for it: long enough for a large description (GitHub's loads in
// about a second), short enough that a spec behind a hung URL does not
// take the whole of a run's time.
const apiCallWait = 10 * time.Second

// attachOpenAPI starts every configured source; with wait (a one-shot
// command, a snapshot of the catalog) it returns once each has loaded or
// failed, or ctx ended.
func (c *common) attachOpenAPI(ctx context.Context, cat *tools.Catalog, wait bool, log *slog.Logger) *apiSources {
	var cfgs []openapi.Config
	if c.cfg != nil {
		for _, o := range c.cfg.OpenAPI {
			cfgs = append(cfgs, o.Config())
		}
	}
	if len(cfgs) == 0 {
		return nil
	}
	bg, cancel := context.WithCancel(context.Background())
	a := &apiSources{loading: map[string]chan struct{}{}, failed: map[string]error{}, cancel: cancel}
	var wg sync.WaitGroup
	for _, cfg := range cfgs {
		p := openapi.Start(bg, cfg)
		done := make(chan struct{})
		a.loading[cfg.Name] = done
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			src, err := p.Wait(bg)
			a.mu.Lock()
			defer a.mu.Unlock()
			delete(a.loading, p.Name())
			if err != nil {
				a.failed[p.Name()] = err
				log.Warn("openapi source not loaded", "source", p.Name(), "err", err.Error())
				return
			}
			a.loaded = append(a.loaded, src)
			added, errs := src.AddTo(cat)
			for _, err := range errs {
				log.Warn("openapi tool not added", "source", p.Name(), "err", err.Error())
			}
			log.Info("openapi source loaded", "source", p.Name(), "tools", len(added))
		}()
	}
	if wait {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	return a
}

// sourceOf returns the source whose tools a name would be, by its prefix.
func (a *apiSources) sourceOf(name string) (src string, loading chan struct{}, failed error, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for n, p := range a.loading {
		if strings.HasPrefix(name, n+"_") {
			return n, p, nil, true
		}
	}
	for n, err := range a.failed {
		if strings.HasPrefix(name, n+"_") {
			return n, nil, err, true
		}
	}
	return "", nil, nil, false
}

// pending waits for the source of name while it loads; it reports whether
// it waited.
func (a *apiSources) pending(ctx context.Context, name string) bool {
	if a == nil {
		return false
	}
	_, p, _, ok := a.sourceOf(name)
	if !ok || p == nil {
		return false
	}
	t := time.NewTimer(apiCallWait)
	defer t.Stop()
	select {
	case <-p:
	case <-t.C:
	case <-ctx.Done():
	}
	return true
}

// unavailable says why a name of a source that failed to load cannot be
// called.
func (a *apiSources) unavailable(name string) (bindings.Unavailability, bool) {
	if a == nil {
		return bindings.Unavailability{}, false
	}
	src, p, err, ok := a.sourceOf(name)
	switch {
	case !ok:
		return bindings.Unavailability{}, false
	case p != nil:
		return bindings.Unavailability{Code: sandbox.EToolFailed, Rule: "openapi.loading",
			Message: fmt.Sprintf("tool %s is not available: the OpenAPI source %q is still loading its description", name, src),
			Hint:    "Try the call again in a moment."}, true
	}
	return bindings.Unavailability{Code: sandbox.EToolFailed, Rule: "openapi.failed",
		Message: fmt.Sprintf("tool %s is not available: the OpenAPI source %q could not be loaded: %v", name, src, err),
		Hint:    "Tell the user the API's description could not be loaded and why; an operator fixes openapi: in sandcall.yaml."}, true
}

// notes says which sources are not available now, one sentence each.
func (a *apiSources) notes() []string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for n := range a.loading {
		out = append(out, fmt.Sprintf("OpenAPI source %s: still loading", n))
	}
	for n, err := range a.failed {
		out = append(out, fmt.Sprintf("OpenAPI source %s: failed to load: %v", n, err))
	}
	sort.Strings(out)
	return out
}

// close abandons the loads in progress and releases the loaded sources.
func (a *apiSources) close() {
	if a == nil {
		return
	}
	a.cancel()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.loaded {
		s.Close()
	}
}

// findings are the loaded sources' spec findings (what in a spec makes a
// poor tool), by source.
func (a *apiSources) findings() []lint.Finding {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []lint.Finding
	for _, s := range a.loaded {
		out = append(out, s.Findings()...)
	}
	return out
}

// apiStatus is a `tools list` row of a source that is not loaded.
type apiStatus struct{ name, status string }

// statuses are the sources still loading or failed, by name.
func (a *apiSources) statuses() []apiStatus {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []apiStatus
	for n := range a.loading {
		out = append(out, apiStatus{n, "OpenAPI source still loading"})
	}
	for n, err := range a.failed {
		out = append(out, apiStatus{n, "OpenAPI source failed to load: " + oneLine(err.Error())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
