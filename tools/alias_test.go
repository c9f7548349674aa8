package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func aliased(name string, aliases ...string) *Tool {
	t := &Tool{Name: name, Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}
	for _, a := range aliases {
		t.Aliases = append(t.Aliases, Alias{Name: a, Until: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
	}
	return t
}

func TestAliases(t *testing.T) {
	c, err := NewCatalog(aliased("get_prices", "prices", "fetch_prices"), aliased("other"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.List(); len(got) != 2 || c.Len() != 2 {
		t.Fatalf("List = %d tools, Len = %d; aliases must not be listed", len(got), c.Len())
	}
	if _, ok := c.Lookup("prices"); ok {
		t.Fatal("Lookup resolved an alias; only Resolve does")
	}
	tool, a, ok := c.Resolve("prices")
	if !ok || tool.Name != "get_prices" || a.Name != "prices" {
		t.Fatalf("Resolve(prices) = %v %+v %v", tool, a, ok)
	}
	if !a.Live(time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC)) || a.Live(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatal("Live does not end at Until")
	}
	if (Alias{Name: "x"}).Live(time.Now()) {
		t.Fatal("an alias with a zero Until is live")
	}
	if tool, a, ok := c.Resolve("get_prices"); !ok || tool.Name != "get_prices" || a.Name != "" {
		t.Fatalf("Resolve(own name) = %v %+v %v", tool, a, ok)
	}
	c.Remove("get_prices")
	if _, _, ok := c.Resolve("prices"); ok {
		t.Fatal("alias outlived its tool")
	}
	// The name is free again.
	if err := c.Add(aliased("prices")); err != nil {
		t.Fatal(err)
	}
}

func TestAliasCollisions(t *testing.T) {
	tests := []struct {
		name string
		add  *Tool
		want string
	}{
		{"alias is another tool's name", aliased("x", "base"), "is the name of another tool"},
		{"alias is another tool's alias", aliased("x", "old_base"), "already an alias"},
		{"name is another tool's alias", aliased("old_base"), "is an alias of tool"},
		{"alias is own name", aliased("x", "x"), "equals the tool's name"},
		{"duplicate alias", aliased("x", "y", "y"), "duplicate alias"},
		{"invalid alias", aliased("x", "bad-name"), "invalid alias"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCatalog(aliased("base", "old_base"))
			if err != nil {
				t.Fatal(err)
			}
			err = c.Add(tc.add)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Add = %v, want an error containing %q", err, tc.want)
			}
			if c.Len() != 1 {
				t.Fatalf("a rejected tool was added")
			}
			if _, _, ok := c.Resolve("x"); ok {
				t.Fatal("a rejected tool's name resolves")
			}
		})
	}
}

func TestReplaceWithAliases(t *testing.T) {
	c, err := NewCatalog(aliased("v1", "old"), aliased("keep", "keep_old"))
	if err != nil {
		t.Fatal(err)
	}
	// v1 becomes v2, keeping the alias and adding v1 as one.
	if err := c.Replace([]string{"v1"}, []*Tool{aliased("v2", "old", "v1")}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"old", "v1"} {
		if tool, _, ok := c.Resolve(n); !ok || tool.Name != "v2" {
			t.Fatalf("Resolve(%s) = %v, %v", n, tool, ok)
		}
	}
	// An alias of a tool that stays is still taken, and a failed Replace changes nothing.
	if err := c.Replace([]string{"v2"}, []*Tool{aliased("v3", "keep_old")}); err == nil {
		t.Fatal("Replace took another tool's alias")
	}
	if tool, _, ok := c.Resolve("v1"); !ok || tool.Name != "v2" {
		t.Fatal("a failed Replace changed the catalog")
	}
	if err := c.Replace(nil, []*Tool{aliased("a", "same"), aliased("b", "same")}); err == nil {
		t.Fatal("Replace added one alias to two tools")
	}
}
