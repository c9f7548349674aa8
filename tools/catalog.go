package tools

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
)

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Catalog is the set of tools a server offers. It is safe for concurrent use.
type Catalog struct {
	mu    sync.RWMutex
	tools map[string]*Tool

	obsMu     sync.Mutex
	observers []func()
}

// OnChange registers f to be called after every Add and Remove that changed
// the catalog (a failed Add or a Remove of an absent name does not call it).
// f runs synchronously in the goroutine that changed the catalog, after the
// catalog's lock is released, so it may call any Catalog method; it must be
// quick (debounce or hand off slow work such as re-listing tools to clients).
// Concurrent changes may call f concurrently. There is no way to unregister.
func (c *Catalog) OnChange(f func()) {
	if f == nil {
		return
	}
	c.obsMu.Lock()
	c.observers = append(c.observers, f)
	c.obsMu.Unlock()
}

func (c *Catalog) changed() {
	c.obsMu.Lock()
	obs := c.observers
	c.obsMu.Unlock()
	for _, f := range obs {
		f()
	}
}

// NewCatalog returns a catalog holding ts. See Add for the checks.
func NewCatalog(ts ...*Tool) (*Catalog, error) {
	c := &Catalog{tools: make(map[string]*Tool)}
	for _, t := range ts {
		if err := c.Add(t); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Add adds t after checking its name (an identifier of at most 64 characters,
// so it is a valid JS property and MCP tool name), its handler and its input
// schema (compiled once, here). A name already present is an error: tools
// are never silently replaced.
func (c *Catalog) Add(t *Tool) error {
	if t == nil {
		return fmt.Errorf("tools: nil tool")
	}
	if !nameRE.MatchString(t.Name) {
		return fmt.Errorf("tools: invalid tool name %q: want [A-Za-z_][A-Za-z0-9_]*, at most 64 characters", t.Name)
	}
	if t.Handler == nil {
		return fmt.Errorf("tools: tool %q has no handler", t.Name)
	}
	if t.Source == "" {
		t.Source = "builtin"
	}
	v, err := compileValidator(t.InputSchema)
	if err != nil {
		return fmt.Errorf("tools: tool %q: input schema: %w", t.Name, err)
	}
	t.validator = v
	c.mu.Lock()
	if _, dup := c.tools[t.Name]; dup {
		c.mu.Unlock()
		return fmt.Errorf("tools: duplicate tool name %q", t.Name)
	}
	c.tools[t.Name] = t
	c.mu.Unlock()
	c.changed()
	return nil
}

// Remove removes the named tool, if present.
func (c *Catalog) Remove(name string) {
	c.mu.Lock()
	_, ok := c.tools[name]
	delete(c.tools, name)
	c.mu.Unlock()
	if ok {
		c.changed()
	}
}

// Lookup returns the named tool.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tools[name]
	return t, ok
}

// List returns every tool, sorted by name.
func (c *Catalog) List() []*Tool {
	c.mu.RLock()
	out := make([]*Tool, 0, len(c.tools))
	for _, t := range c.tools {
		out = append(out, t)
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Len returns the number of tools.
func (c *Catalog) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.tools)
}
