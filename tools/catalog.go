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
	defer c.mu.Unlock()
	if _, dup := c.tools[t.Name]; dup {
		return fmt.Errorf("tools: duplicate tool name %q", t.Name)
	}
	c.tools[t.Name] = t
	return nil
}

// Remove removes the named tool, if present.
func (c *Catalog) Remove(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tools, name)
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
