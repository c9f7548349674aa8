package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// catalogOf returns n realistic tools: those of tools/search's fixture
// catalog (crm, billing, github, k8s, …, with a schema of described string
// properties each), repeated with a numeric suffix past its size.
func catalogOf(t *testing.T, n int) []*tools.Tool {
	t.Helper()
	f, err := os.Open("../../tools/search/testdata/catalog.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var base []*tools.Tool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "|")
		in := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		for _, p := range strings.Split(parts[2], ";") {
			if name, desc, ok := strings.Cut(strings.TrimSpace(p), ":"); ok {
				name = strings.TrimSpace(name)
				in.Properties[name] = &jsonschema.Schema{Type: "string", Description: strings.TrimSpace(desc)}
				in.PropertyOrder = append(in.PropertyOrder, name)
			}
		}
		base = append(base, &tools.Tool{Name: strings.TrimSpace(parts[0]), Description: strings.TrimSpace(parts[1]), InputSchema: in})
	}
	var out []*tools.Tool
	for i := 0; len(out) < n; i++ {
		c := *base[i%len(base)]
		if i >= len(base) {
			c.Name = fmt.Sprintf("%s_%d", c.Name, i/len(base)+1)
		}
		c.Handler = func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
		out = append(out, &c)
	}
	return out
}

// discoveryHarness serves n catalog tools plus the discovery tools, under
// the policy src if not empty.
func discoveryHarness(t *testing.T, n int, policySrc string) (*harness, *mcpserver.Server) {
	t.Helper()
	cat, srv := discoveryServer(t, catalogOf(t, n), policySrc)
	return connect(t, srv, cat, nil, options{}), srv
}

// discoveryServer serves ts plus the discovery tools (search_tools,
// describe_tools) with a JavaScript runner, under the policy src if not
// empty.
func discoveryServer(t *testing.T, ts []*tools.Tool, policySrc string) (*tools.Catalog, *mcpserver.Server) {
	t.Helper()
	cat, err := tools.NewCatalog(ts...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	if policySrc != "" {
		c, err := policy.Parse("p.yaml", []byte(policySrc))
		if err != nil {
			t.Fatal(err)
		}
		b.SetAuthorizer(bindings.NewPolicyAuthorizer(c))
	}
	if err := bindings.AddDiscovery(b); err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	return cat, srv
}

// listSizes returns the bytes of the tools/list result and of run_code's
// description, as a client receives them.
func listSizes(t *testing.T, h *harness) (names []string, desc string, listBytes int) {
	t.Helper()
	lt, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(lt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Name == mcpserver.RunCodeName {
			desc = tl.Description
		}
	}
	slices.Sort(names)
	return names, desc, len(b)
}

// TestListingSmallCatalog: with 10 tools, run_code's description lists
// every binding with its signature (no discovery round trip needed) and
// every tool is served directly.
func TestListingSmallCatalog(t *testing.T) {
	h, _ := discoveryHarness(t, 10, "")
	names, desc, size := listSizes(t, h)
	t.Logf("10 tools: tools/list %d bytes, run_code description %d bytes", size, len(desc))
	for _, tool := range catalogOf(t, 10) {
		if !strings.Contains(desc, "- "+tool.Name+"(args?: {") {
			t.Errorf("description does not list %s with its signature", tool.Name)
		}
		if !slices.Contains(names, tool.Name) {
			t.Errorf("%s not served directly", tool.Name)
		}
	}
	for _, n := range []string{bindings.SearchToolsName, bindings.DescribeToolsName, mcpserver.RunCodeName} {
		if !slices.Contains(names, n) {
			t.Errorf("%s not served", n)
		}
	}
	if strings.Contains(desc, "- search_tools") || strings.Contains(desc, "- describe_tools") {
		t.Errorf("the description lists the discovery tools as bindings:\n%s", desc)
	}
}

// TestListingLargeCatalog: with 500 tools, tools/list stays under 16 KiB and
// run_code's description under 4 KiB; the description names families and
// points to search_tools; only the server's tools, the discovery tools and
// pinned tools are served; search and describe work through MCP.
func TestListingLargeCatalog(t *testing.T) {
	h, _ := discoveryHarness(t, 500, `version: 1
rules:
  - tools: [pagerduty_get_oncall]
    pin: true
`)
	names, desc, size := listSizes(t, h)
	t.Logf("500 tools: tools/list %d bytes, run_code description %d bytes", size, len(desc))
	if testing.Verbose() {
		t.Log(desc)
	}
	if size > 16<<10 {
		t.Errorf("tools/list is %d bytes, over 16 KiB", size)
	}
	if len(desc) > 4<<10 {
		t.Errorf("run_code description is %d bytes, over 4 KiB:\n%s", len(desc), desc)
	}
	want := []string{bindings.DescribeToolsName, "pagerduty_get_oncall", mcpserver.ReadOutputName, mcpserver.RunCodeName, bindings.SearchToolsName}
	if !slices.Equal(names, want) {
		t.Errorf("tools/list = %v, want %v", names, want)
	}
	for _, s := range []string{"500 tools are callable", "github (", "k8s (", "search_tools", "tools.$search(", "describe_tools"} {
		if !strings.Contains(desc, s) {
			t.Errorf("description lacks %q:\n%s", s, desc)
		}
	}

	// search_tools through a real MCP client.
	res := h.call(t, bindings.SearchToolsName, map[string]any{"query": "restart kubernetes deployment", "limit": 3})
	if res.IsError {
		t.Fatalf("search_tools failed: %v", res.Content)
	}
	var sr bindings.SearchResult
	if err := json.Unmarshal(textJSON(t, res), &sr); err != nil {
		t.Fatal(err)
	}
	if sr.Shown == 0 || sr.Shown > 3 || !strings.HasPrefix(sr.Tools[0].Name, "k8s_rollout_restart") || sr.Searched != 500 {
		t.Errorf("search_tools: %+v", sr)
	}
	// describe_tools of what it found.
	res = h.call(t, bindings.DescribeToolsName, map[string]any{"names": []string{sr.Tools[0].Name}})
	if res.IsError {
		t.Fatalf("describe_tools failed: %v", res.Content)
	}
	var dr bindings.DescribeResult
	sb, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(sb, &dr); err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "// Call in a run_code program: await tools."+sr.Tools[0].Name) ||
		!strings.Contains(text, "\n"+sr.Tools[0].Name+"(args?: {") {
		t.Errorf("describe_tools' text block is not the plain declarations:\n%s", text)
	}
	if !strings.Contains(dr.Declarations, sr.Tools[0].Name+"(args?: {") || !strings.Contains(dr.Declarations, "deployment?: string;") {
		t.Errorf("declarations:\n%s", dr.Declarations)
	}
	// An unlisted tool is still callable from a program, found by $search.
	res = h.call(t, mcpserver.RunCodeName, map[string]any{"code": `
const f = await tools.$search("current on-call engineer for a service", 1);
const r = await tools[f.tools[0].name]({service: "checkout"});
return {name: f.tools[0].name, r, direct: await tools.billing_list_invoices({})};`})
	if res.IsError {
		t.Fatalf("run_code failed: %s", textJSON(t, res))
	}
	if got := string(textJSON(t, res)); !strings.Contains(got, `"result":{"name":"pagerduty_get_oncall","r":{},"direct":{}}`) {
		t.Errorf("run_code result: %s", got)
	}
}

// TestListThresholdNegative: a negative threshold lists and serves every
// tool, whatever the catalog size.
func TestListThresholdNegative(t *testing.T) {
	r := newRunner(t, catalogOf(t, 40)...)
	srv, err := mcpserver.New(mcpserver.Config{Runner: r, ListThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := connect(t, srv, r.Broker().Catalog(), nil, options{})
	names, desc, _ := listSizes(t, h)
	if len(names) != 42 || !strings.Contains(desc, "- crm_search_contacts(") {
		t.Errorf("threshold -1: %d tools served; description:\n%s", len(names), desc)
	}
}

// TestFamiliesNameEveryFamily: over the threshold, run_code's description
// names every family, one-tool families and names without an underscore
// included (no "other (1)" hiding one), and its example search comes from
// the catalog at hand and finds a tool.
func TestFamiliesNameEveryFamily(t *testing.T) {
	ts := catalogOf(t, 40)
	handler := ts[0].Handler
	ts = append(ts, &tools.Tool{Name: "ping", Description: "Answers pong.", Handler: handler},
		&tools.Tool{Name: "weather_now", Description: "Current weather in a city.", Handler: handler})
	cat, srv := discoveryServer(t, ts, "")
	h := connect(t, srv, cat, nil, options{})
	_, desc, _ := listSizes(t, h)
	for _, want := range []string{"ping (1)", "weather (1)"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(desc, "other (") {
		t.Errorf("description lumps families into other:\n%s", desc)
	}
	_, ex, ok := strings.Cut(desc, "Example: ")
	if !ok || strings.Contains(ex, "refund an order") {
		t.Fatalf("example is not from this catalog: %q", ex)
	}
	res := h.call(t, mcpserver.RunCodeName, map[string]any{"code": ex})
	if res.IsError || !strings.Contains(string(textJSON(t, res)), `"name":`) {
		t.Errorf("the example finds nothing: %s\n%s", ex, textJSON(t, res))
	}
}
