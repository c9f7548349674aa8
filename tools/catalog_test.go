package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func nop(context.Context, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func TestCatalogAdd(t *testing.T) {
	c, err := NewCatalog(&Tool{Name: "b", Handler: nop}, &Tool{Name: "a", Handler: nop})
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
	if got := c.List(); got[0].Name != "a" || got[1].Name != "b" {
		t.Errorf("List not sorted: %s, %s", got[0].Name, got[1].Name)
	}
	a, ok := c.Lookup("a")
	if !ok || a.Source != "builtin" || a.validator == nil {
		t.Errorf("Lookup(a) = %+v, %v; want a compiled builtin tool", a, ok)
	}
	if _, ok := c.Lookup("zz"); ok {
		t.Error("Lookup(zz) found a tool")
	}
	if err := c.Add(&Tool{Name: "a", Handler: nop}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("Add(duplicate) = %v, want a duplicate error", err)
	}
	if a2, _ := c.Lookup("a"); a2 != a {
		t.Error("a duplicate replaced the tool")
	}
	c.Remove("a")
	c.Remove("a") // absent: no-op
	if _, ok := c.Lookup("a"); ok || c.Len() != 1 {
		t.Error("Remove did not remove")
	}
	if _, err := NewCatalog(&Tool{Name: "x", Handler: nop}, &Tool{Name: "x", Handler: nop}); err == nil {
		t.Error("NewCatalog accepted duplicate names")
	}
}

func TestCatalogRejects(t *testing.T) {
	c, _ := NewCatalog()
	for name, tool := range map[string]*Tool{
		"nil":              nil,
		"empty name":       {Name: "", Handler: nop},
		"digit first":      {Name: "1abc", Handler: nop},
		"dash":             {Name: "get-expenses", Handler: nop},
		"dot":              {Name: "a.b", Handler: nop},
		"space":            {Name: "a b", Handler: nop},
		"unicode":          {Name: "café", Handler: nop},
		"65 characters":    {Name: strings.Repeat("a", 65), Handler: nop},
		"no handler":       {Name: "ok"},
		"bad schema":       {Name: "ok", Handler: nop, InputSchema: mustSchema(t, `{"type":"object","properties":{"a":{"$ref":"#/nope"}}}`)},
		"bad pattern":      {Name: "ok", Handler: nop, InputSchema: mustSchema(t, `{"type":"object","properties":{"a":{"pattern":"(?<=a)"}}}`)},
		"remote reference": {Name: "ok", Handler: nop, InputSchema: mustSchema(t, `{"$ref":"https://example.com/schema.json"}`)},
	} {
		if err := c.Add(tool); err == nil {
			t.Errorf("Add(%s) = nil, want an error", name)
		}
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d after rejected adds", c.Len())
	}
	for _, name := range []string{"a", "_", "A_1", strings.Repeat("a", 64)} {
		if err := c.Add(&Tool{Name: name, Handler: nop}); err != nil {
			t.Errorf("Add(%q) = %v", name, err)
		}
	}
}

// TestCatalogHammer adds, looks up, lists, calls and removes tools from many
// goroutines at once; run with -race.
func TestCatalogHammer(t *testing.T) {
	c, _ := NewCatalog()
	const workers, perWorker = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				name := fmt.Sprintf("t_%d_%d", w, i)
				if err := c.Add(&Tool{Name: name, Handler: nop}); err != nil {
					t.Error(err)
					return
				}
				// Everyone races to add the same shared name: exactly one wins.
				_ = c.Add(&Tool{Name: fmt.Sprintf("shared_%d", i), Handler: nop})
				if tool, ok := c.Lookup(name); !ok {
					t.Errorf("Lookup(%s) failed after Add", name)
				} else if _, err := tool.Call(context.Background(), json.RawMessage(`{}`)); err != nil {
					t.Error(err)
				}
				if i%10 == 0 {
					_ = c.List()
					_ = c.Len()
				}
				if i%2 == 1 {
					c.Remove(name)
				}
			}
		}()
	}
	wg.Wait()
	if want := workers*perWorker/2 + perWorker; c.Len() != want {
		t.Errorf("Len = %d, want %d", c.Len(), want)
	}
}

func TestCatalogOnChange(t *testing.T) {
	c, _ := NewCatalog()
	var n atomic.Int64
	c.OnChange(func() {
		n.Add(1)
		c.Len() // observers run outside the lock: no deadlock
	})
	c.OnChange(nil) // ignored
	if err := c.Add(&Tool{Name: "a", Handler: nop}); err != nil {
		t.Fatal(err)
	}
	_ = c.Add(&Tool{Name: "a", Handler: nop}) // duplicate: no change
	_ = c.Add(&Tool{Name: "1", Handler: nop}) // invalid: no change
	c.Remove("nope")                          // absent: no change
	c.Remove("a")
	if got := n.Load(); got != 2 {
		t.Fatalf("observer called %d times, want 2", got)
	}
}

// TestCatalogOnChangeRace hammers Add, Remove, OnChange and reads
// concurrently (run with -race).
func TestCatalogOnChangeRace(t *testing.T) {
	c, _ := NewCatalog()
	var n atomic.Int64
	c.OnChange(func() { n.Add(1); _ = c.List() })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				name := fmt.Sprintf("t%d_%d", g, i%5)
				_ = c.Add(&Tool{Name: name, Handler: nop})
				c.Lookup(name)
				c.Remove(name)
				if i%50 == 0 {
					c.OnChange(func() {})
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() != 0 || n.Load() != 8*200*2 {
		t.Fatalf("len %d, %d notifications, want 0 and %d", c.Len(), n.Load(), 8*200*2)
	}
}
