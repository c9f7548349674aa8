package tools

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
)

func replTool(name string) *Tool {
	return &Tool{Name: name, Description: "x", Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage("1"), nil
	}}
}

// TestReplaceAtomic swaps a tool over and over while readers look it up:
// it is never missing, and each swap notifies once.
func TestReplaceAtomic(t *testing.T) {
	c, err := NewCatalog(replTool("a"), replTool("keep"))
	if err != nil {
		t.Fatal(err)
	}
	var notes atomic.Int64
	c.OnChange(func() { notes.Add(1) })
	stop := make(chan struct{})
	var missing, looks atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				looks.Add(1)
				if _, ok := c.Lookup("a"); !ok {
					missing.Add(1)
				}
			}
		}()
	}
	const n = 2000
	for i := range n {
		add := []*Tool{replTool("a")}
		if i%2 == 0 {
			add = append(add, replTool("b"))
		}
		remove := []string{"a", "b"}
		if err := c.Replace(remove, add); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if missing.Load() > 0 {
		t.Fatalf("a missing in %d of %d lookups", missing.Load(), looks.Load())
	}
	if notes.Load() != n {
		t.Fatalf("%d notifications for %d replaces", notes.Load(), n)
	}
	if _, ok := c.Lookup("keep"); !ok || c.Len() != 2 {
		t.Fatalf("catalog = %v", c.List())
	}
}

func TestReplaceErrorsChangeNothing(t *testing.T) {
	c, _ := NewCatalog(replTool("a"), replTool("other"))
	var notes atomic.Int64
	c.OnChange(func() { notes.Add(1) })
	bad := replTool("c")
	bad.Handler = nil
	for name, tc := range map[string]struct {
		remove []string
		add    []*Tool
	}{
		"taken":    {[]string{"a"}, []*Tool{replTool("a"), replTool("other")}},
		"twice":    {[]string{"a"}, []*Tool{replTool("n"), replTool("n")}},
		"bad name": {[]string{"a"}, []*Tool{replTool("1x")}},
		"handler":  {[]string{"a"}, []*Tool{bad}},
		"nil":      {[]string{"a"}, []*Tool{nil}},
	} {
		if err := c.Replace(tc.remove, tc.add); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, ok := c.Lookup("a"); !ok || c.Len() != 2 {
			t.Errorf("%s: the catalog changed: %v", name, c.List())
		}
	}
	if notes.Load() != 0 {
		t.Fatalf("%d notifications for failed replaces", notes.Load())
	}
	if err := c.Replace([]string{"absent"}, nil); err != nil || notes.Load() != 0 {
		t.Fatalf("removing an absent name: %v, %d notifications", err, notes.Load())
	}
}
