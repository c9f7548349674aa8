package tools

import (
	"fmt"
	"sort"
	"sync"
)

// validName reports whether s is a tool name: a letter or _, then up to 63
// letters, digits or _ (^[A-Za-z_][A-Za-z0-9_]{0,63}$, checked without a
// regular expression: compiling that bounded repetition costs a tenth of a
// millisecond at every start of the binary, workers included).
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Catalog is the set of tools a server offers. It is safe for concurrent use.
type Catalog struct {
	mu      sync.RWMutex
	tools   map[string]*Tool
	aliases map[string]aliasEntry // deprecated names (Tool.Aliases), never listed

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

// aliasEntry is one deprecated name and the tool it stands for.
type aliasEntry struct {
	tool  *Tool
	alias Alias
}

// NewCatalog returns a catalog holding ts. See Add for the checks.
func NewCatalog(ts ...*Tool) (*Catalog, error) {
	c := &Catalog{tools: make(map[string]*Tool), aliases: make(map[string]aliasEntry)}
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
// are never silently replaced. Each of t.Aliases is checked like a name and
// must not collide with any tool's name or alias.
func (c *Catalog) Add(t *Tool) error {
	if err := checkTool(t); err != nil {
		return err
	}
	if t.Source == "" {
		t.Source = "builtin"
	}
	if err := checkAliases(t); err != nil {
		return err
	}
	v, err := compileValidator(t.InputSchema)
	if err != nil {
		return fmt.Errorf("tools: tool %q: input schema: %w", t.Name, err)
	}
	t.validator = v
	c.mu.Lock()
	if err := c.collisionLocked(t); err != nil {
		c.mu.Unlock()
		return err
	}
	c.tools[t.Name] = t
	c.addAliasesLocked(t)
	c.mu.Unlock()
	c.changed()
	return nil
}

// checkTool checks what Add and Replace require of every tool: a name
// that is an identifier of at most 64 characters, and a handler.
func checkTool(t *Tool) error {
	if t == nil {
		return fmt.Errorf("tools: nil tool")
	}
	if !validName(t.Name) {
		return fmt.Errorf("tools: invalid tool name %q: want [A-Za-z_][A-Za-z0-9_]*, at most 64 characters", t.Name)
	}
	if t.Handler == nil {
		return fmt.Errorf("tools: tool %q has no handler", t.Name)
	}
	return nil
}

// Remove removes the named tool and its aliases, if present.
func (c *Catalog) Remove(name string) {
	c.mu.Lock()
	t, ok := c.tools[name]
	delete(c.tools, name)
	if ok {
		c.removeAliasesLocked(t)
	}
	c.mu.Unlock()
	if ok {
		c.changed()
	}
}

// Replace removes the named tools and adds add in one step: a concurrent
// Lookup sees either the old set or the new one, never a gap between them,
// and observers are called once. Each added tool gets Add's checks; a name
// may be added again only if remove names it. On any error nothing
// changes. Names in remove that are absent are ignored.
func (c *Catalog) Replace(remove []string, add []*Tool) error {
	for _, t := range add {
		if err := checkTool(t); err != nil {
			return err
		}
		if err := checkAliases(t); err != nil {
			return err
		}
	}
	validators := make([]*validator, len(add))
	for i, t := range add {
		v, err := compileValidator(t.InputSchema)
		if err != nil {
			return fmt.Errorf("tools: tool %q: input schema: %w", t.Name, err)
		}
		validators[i] = v
	}
	gone := make(map[string]bool, len(remove))
	for _, n := range remove {
		gone[n] = true
	}
	c.mu.Lock()
	seen := make(map[string]bool, len(add))
	// taken reports whether n stays a name or alias of a tool not removed.
	taken := func(n string) bool {
		if _, dup := c.tools[n]; dup && !gone[n] {
			return true
		}
		a, dup := c.aliases[n]
		return dup && !gone[a.tool.Name]
	}
	for _, t := range add {
		if taken(t.Name) || seen[t.Name] {
			c.mu.Unlock()
			return fmt.Errorf("tools: duplicate tool name %q", t.Name)
		}
		seen[t.Name] = true
		for _, a := range t.Aliases {
			if taken(a.Name) || seen[a.Name] {
				c.mu.Unlock()
				return fmt.Errorf("tools: tool %q: alias %q is already a tool's name or alias", t.Name, a.Name)
			}
			seen[a.Name] = true
		}
	}
	changed := len(add) > 0
	for n := range gone {
		if old, ok := c.tools[n]; ok {
			delete(c.tools, n)
			c.removeAliasesLocked(old)
			changed = true
		}
	}
	for i, t := range add {
		if t.Source == "" {
			t.Source = "builtin"
		}
		t.validator = validators[i]
		c.tools[t.Name] = t
		c.addAliasesLocked(t)
	}
	c.mu.Unlock()
	if changed {
		c.changed()
	}
	return nil
}

// Lookup returns the named tool.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tools[name]
	return t, ok
}

// Resolve returns the tool called name, by its own name or by one of its
// aliases. For an alias it also returns the Alias (whose Until says whether
// the call may still be made); for a tool's own name the Alias is zero.
// Resolve does not check the clock: callers decide with Alias.Live.
func (c *Catalog) Resolve(name string) (*Tool, Alias, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t, ok := c.tools[name]; ok {
		return t, Alias{}, true
	}
	if a, ok := c.aliases[name]; ok {
		return a.tool, a.alias, true
	}
	return nil, Alias{}, false
}

// checkAliases checks the aliases of t on their own: valid names, none
// equal to t.Name, no duplicates.
func checkAliases(t *Tool) error {
	for i, a := range t.Aliases {
		if !validName(a.Name) {
			return fmt.Errorf("tools: tool %q: invalid alias %q: want [A-Za-z_][A-Za-z0-9_]*, at most 64 characters", t.Name, a.Name)
		}
		if a.Name == t.Name {
			return fmt.Errorf("tools: tool %q: alias equals the tool's name", t.Name)
		}
		for _, b := range t.Aliases[:i] {
			if b.Name == a.Name {
				return fmt.Errorf("tools: tool %q: duplicate alias %q", t.Name, a.Name)
			}
		}
	}
	return nil
}

// collisionLocked reports a name or alias of t that is already a name or
// alias in the catalog.
func (c *Catalog) collisionLocked(t *Tool) error {
	if _, dup := c.tools[t.Name]; dup {
		return fmt.Errorf("tools: duplicate tool name %q", t.Name)
	}
	if a, dup := c.aliases[t.Name]; dup {
		return fmt.Errorf("tools: tool name %q is an alias of tool %q", t.Name, a.tool.Name)
	}
	for _, a := range t.Aliases {
		if _, dup := c.tools[a.Name]; dup {
			return fmt.Errorf("tools: tool %q: alias %q is the name of another tool", t.Name, a.Name)
		}
		if o, dup := c.aliases[a.Name]; dup {
			return fmt.Errorf("tools: tool %q: alias %q is already an alias of tool %q", t.Name, a.Name, o.tool.Name)
		}
	}
	return nil
}

func (c *Catalog) addAliasesLocked(t *Tool) {
	if len(t.Aliases) == 0 {
		return
	}
	if c.aliases == nil {
		c.aliases = make(map[string]aliasEntry)
	}
	for _, a := range t.Aliases {
		c.aliases[a.Name] = aliasEntry{tool: t, alias: a}
	}
}

func (c *Catalog) removeAliasesLocked(t *Tool) {
	for _, a := range t.Aliases {
		if e, ok := c.aliases[a.Name]; ok && e.tool == t {
			delete(c.aliases, a.Name)
		}
	}
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
