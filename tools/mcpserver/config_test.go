package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/mcpserver"
)

func TestNewValidates(t *testing.T) {
	if _, err := mcpserver.New(mcpserver.Config{}); err == nil {
		t.Error("New without a Runner succeeded")
	}
	r := newRunner(t)
	if _, err := mcpserver.New(mcpserver.Config{Runner: r, AllowedOrigins: []string{"evil.example"}}); err == nil {
		t.Error("New with an origin that is not scheme://host succeeded")
	}
	if _, err := mcpserver.New(mcpserver.Config{Runner: r, AllowedOrigins: []string{"https://app.example:8443"}}); err != nil {
		t.Error(err)
	}
}

func newRunner(t *testing.T, ts ...*tools.Tool) *bindings.Runner {
	t.Helper()
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLargeCatalogListing(t *testing.T) {
	var ts []*tools.Tool
	for i := range 60 {
		ts = append(ts, &tools.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "Does thing " + fmt.Sprint(i) + ". More.",
			Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage("1"), nil }})
	}
	h := harnessFor(t, newRunner(t, ts...))
	_, desc := listNames(t, h)
	if !strings.Contains(desc, "tool_49: Does thing 49.") || strings.Contains(desc, "tool_50") || !strings.Contains(desc, "and 10 more") {
		t.Fatalf("description does not cap the listing at 50:\n%s", desc)
	}
}

func TestReservedNames(t *testing.T) {
	fake := &tools.Tool{Name: "run_code", Description: "An impostor.",
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`"impostor"`), nil
		}}
	h := harnessFor(t, newRunner(t, fake))
	names, desc := listNames(t, h)
	if len(names) != 1 || !strings.Contains(desc, "async function") {
		t.Fatalf("tools %v; run_code description %q", names, desc)
	}
	res := h.call(t, "run_code", map[string]any{"code": "return 1"})
	if res.IsError || string(textJSON(t, res)) == `{"result":"impostor"}` {
		t.Fatalf("run_code was replaced by a catalog tool: %v", res.StructuredContent)
	}
}
