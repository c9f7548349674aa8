package bindings_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

func discoveryTool(name, desc string, callers ...tools.Caller) *tools.Tool {
	return &tools.Tool{Name: name, Description: desc, AllowedCallers: callers,
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }}
}

// newDiscovery is a broker over a small catalog with the discovery tools,
// and a runner with the real JavaScript engine.
func newDiscovery(t *testing.T) (*bindings.Broker, *bindings.Runner) {
	t.Helper()
	type refundArgs struct {
		OrderID string `json:"order_id" jsonschema:"the order"`
		Reason  string `json:"reason,omitempty" enum:"damaged,late,other"`
	}
	refund := tools.MustFunc(tools.Tool{Name: "shop_refund_order", Description: "Refund a store order, fully or partly."},
		func(context.Context, refundArgs) (map[string]any, error) { return map[string]any{"ok": true}, nil })
	cat, err := tools.NewCatalog(
		refund,
		discoveryTool("shop_list_orders", "List store orders by status and date."),
		discoveryTool("billing_refund_payment", "Refund a card payment to the customer.", tools.Direct),
		discoveryTool("k8s_rollout_restart", "Restart a Kubernetes deployment's pods.", tools.Code),
	)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	if err := bindings.AddDiscovery(b); err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{}),
		Limits: sandbox.Limits{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return b, r
}

func names(ts []bindings.FoundTool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// TestSearchToolsDirect: a direct caller sees the tools it may call directly
// or from code, never the discovery tools, ranked.
func TestSearchToolsDirect(t *testing.T) {
	b, _ := newDiscovery(t)
	raw, err := b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName,
		json.RawMessage(`{"query":"refund an order"}`))
	if err != nil {
		t.Fatal(err)
	}
	var res bindings.SearchResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	got := names(res.Tools)
	if len(got) == 0 || got[0] != "shop_refund_order" {
		t.Fatalf("tools = %v, want shop_refund_order first", got)
	}
	if res.Shown != len(res.Tools) || res.Total < res.Shown || res.Searched != 4 {
		t.Errorf("shown %d total %d searched %d (4 tools may be called, the discovery tools not counted)", res.Shown, res.Total, res.Searched)
	}
	sig := res.Tools[0].Signature
	if !strings.HasPrefix(sig, `shop_refund_order(args: {order_id: string; reason?: "damaged" | "late" | "other"})`) {
		t.Errorf("signature = %s", sig)
	}
	for _, n := range got {
		if bindings.IsDiscovery(n) {
			t.Errorf("search lists itself: %v", got)
		}
	}
	if !res.Confident || res.Families != nil {
		t.Errorf("a confident answer: confident %v, families %v", res.Confident, res.Families)
	}
	// Nothing relevant: not confident, no tool shares a word, the
	// families to look in and a hint; not an error.
	raw, err = b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName,
		json.RawMessage(`{"query":"weather forecast in Lisbon"}`))
	if err != nil {
		t.Fatal(err)
	}
	res = bindings.SearchResult{}
	_ = json.Unmarshal(raw, &res)
	if res.Confident || res.Shown != 0 || res.Total != 0 || res.Hint == "" || res.Tools == nil || !strings.Contains(string(raw), `"confident":false`) {
		t.Errorf("no match: %s", raw)
	}
	var fams []string
	for _, f := range res.Families {
		fams = append(fams, fmt.Sprintf("%s:%d", f.Name, f.Tools))
	}
	if strings.Join(fams, ",") != "shop:2" {
		t.Errorf("families %v, want shop's (the one name prefix two tools share), with its tools", fams)
	}
	// Close but not sure: the closest tools, marked so, and the families.
	raw, err = b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName,
		json.RawMessage(`{"query":"void the order"}`))
	if err != nil {
		t.Fatal(err)
	}
	res = bindings.SearchResult{}
	_ = json.Unmarshal(raw, &res)
	if res.Confident || res.Shown == 0 || res.Shown > 5 || len(res.Families) == 0 || !strings.Contains(res.Hint, "closest") {
		t.Errorf("close, not sure: %s", raw)
	}
	// A family's name lists its tools, confidently.
	raw, err = b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName, json.RawMessage(`{"query":"shop tools"}`))
	if err != nil {
		t.Fatal(err)
	}
	res = bindings.SearchResult{}
	_ = json.Unmarshal(raw, &res)
	if got := names(res.Tools); !res.Confident || strings.Join(got, ",") != "shop_list_orders,shop_refund_order" && strings.Join(got, ",") != "shop_refund_order,shop_list_orders" {
		t.Errorf("shop tools: %s", raw)
	}
	// Bad arguments are E_TOOL_ARGS, as for any tool.
	_, err = b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName, json.RawMessage(`{"query":"x","limit":500}`))
	if e := sandbox.AsError(err, ""); e == nil || e.Code != sandbox.EToolArgs {
		t.Errorf("limit 500: err = %v, want E_TOOL_ARGS", err)
	}
}

// TestDiscoveryFromCode: a program sees only the tools it may call from
// code, through tools.$search and tools.$describe.
func TestDiscoveryFromCode(t *testing.T) {
	_, r := newDiscovery(t)
	src := `
const s = await tools.$search("refund", 10);
const d = await tools.$describe(["shop_refund_order", "billing_refund_payment", "nope"]);
const one = await tools.$describe("tools.k8s_rollout_restart");
let err = null;
try { await tools.$describe(["search_tools"]); } catch (e) { err = e.code; }
return {found: s.tools.map(t => t.name), confident: s.confident, callers: s.tools.map(t => t.callers.join()), described: d.described,
        unknown: d.unknown, decl: d.declarations, one: one.described, err};`
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: src}})
	if !res.OK {
		t.Fatalf("run failed: %+v", res.Error)
	}
	var out struct {
		Found, Callers, Described, Unknown, One []string
		Decl, Err                               string
		Confident                               bool
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.Found, ",") != "shop_refund_order" || !out.Confident {
		t.Errorf("found %v: a program must not see the direct-only billing_refund_payment", out.Found)
	}
	if strings.Join(out.Callers, ";") != "code" {
		t.Errorf("callers = %v", out.Callers)
	}
	if strings.Join(out.Described, ",") != "shop_refund_order" || strings.Join(out.Unknown, ",") != "billing_refund_payment,nope" {
		t.Errorf("described %v unknown %v", out.Described, out.Unknown)
	}
	if !strings.Contains(out.Decl, "shop_refund_order(args: {") || !strings.Contains(out.Decl, `"damaged" | "late" | "other"`) {
		t.Errorf("declaration:\n%s", out.Decl)
	}
	if strings.Join(out.One, ",") != "k8s_rollout_restart" {
		t.Errorf("$describe of one name with a tools. prefix: %v", out.One)
	}
	if out.Err != string(sandbox.EToolUnknown) {
		t.Errorf("describing a discovery tool: %q, want E_TOOL_UNKNOWN", out.Err)
	}
}

// TestDiscoveryFollowsCatalog: a tool added after the first search is found;
// a removed one is not.
func TestDiscoveryFollowsCatalog(t *testing.T) {
	b, _ := newDiscovery(t)
	search := func(q string) []string {
		raw, err := b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName, json.RawMessage(`{"query":"`+q+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var res bindings.SearchResult
		_ = json.Unmarshal(raw, &res)
		return names(res.Tools)
	}
	if got := search("weather forecast"); len(got) != 0 {
		t.Fatalf("before: %v", got)
	}
	if err := b.Catalog().Add(discoveryTool("weather_get_forecast", "Weather forecast for a city.")); err != nil {
		t.Fatal(err)
	}
	if got := search("weather forecast"); len(got) != 1 || got[0] != "weather_get_forecast" {
		t.Errorf("after add: %v", got)
	}
	b.Catalog().Remove("weather_get_forecast")
	if got := search("weather forecast"); len(got) != 0 {
		t.Errorf("after remove: %v", got)
	}
}

// TestDiscoveryHonoursPolicy: a tool the policy hides from a caller is not
// found or described; a denied discovery call is denied like any other.
func TestDiscoveryHonoursPolicy(t *testing.T) {
	b, _ := newDiscovery(t)
	b.SetAuthorizer(hideTool{name: "shop_refund_order"})
	raw, err := b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName, json.RawMessage(`{"query":"refund order"}`))
	if err != nil {
		t.Fatal(err)
	}
	var res bindings.SearchResult
	_ = json.Unmarshal(raw, &res)
	for _, n := range names(res.Tools) {
		if n == "shop_refund_order" {
			t.Errorf("hidden tool found: %v", names(res.Tools))
		}
	}
	_, err = b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.DescribeToolsName, json.RawMessage(`{"names":["shop_refund_order"]}`))
	if e := sandbox.AsError(err, ""); e == nil || e.Code != sandbox.EToolUnknown || e.Hint == "" {
		t.Errorf("describe hidden tool: %v, want E_TOOL_UNKNOWN with a hint", err)
	}
	b.SetAuthorizer(hideTool{name: bindings.SearchToolsName})
	_, err = b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName, json.RawMessage(`{"query":"refund"}`))
	if e := sandbox.AsError(err, ""); e == nil || e.Code != sandbox.EToolDenied {
		t.Errorf("denied search: %v", err)
	}
}

// hideTool denies and hides one tool, and defers to the default otherwise.
type hideTool struct{ name string }

func (h hideTool) Authorize(ctx context.Context, c *bindings.CallInfo) bindings.Decision {
	if c.Tool.Name == h.name {
		return bindings.Decision{Rule: "test.hide", Message: "hidden"}
	}
	return bindings.DefaultAuthorizer{}.Authorize(ctx, c)
}

func (h hideTool) Exposes(t *tools.Tool, c tools.Caller, p bindings.Principal) bool {
	return t.Name != h.name && bindings.DefaultAuthorizer{}.Exposes(t, c, p)
}

func TestDiscoveryOutsideBroker(t *testing.T) {
	b, _ := newDiscovery(t)
	st, _ := b.Catalog().Lookup(bindings.SearchToolsName)
	_, err := st.Call(context.Background(), json.RawMessage(`{"query":"refund"}`))
	var e *sandbox.Error
	if !errors.As(err, &e) || e.Code != sandbox.EInternal {
		t.Errorf("search outside the broker: %v, want E_INTERNAL", err)
	}
}

// TestDiscoveryAliases: a deprecated alias is never found by search; asked
// for by describe_tools, it gives the tool under its new name, with a hint.
func TestDiscoveryAliases(t *testing.T) {
	b, _ := newDiscovery(t)
	tool := discoveryTool("weather_get_forecast", "Weather forecast for a city.")
	tool.Aliases = []tools.Alias{{Name: "forecast_weather_old", Until: time.Now().Add(time.Hour)}}
	if err := b.Catalog().Add(tool); err != nil {
		t.Fatal(err)
	}
	raw, err := b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName, json.RawMessage(`{"query":"forecast_weather_old"}`))
	if err != nil {
		t.Fatal(err)
	}
	var sr bindings.SearchResult
	_ = json.Unmarshal(raw, &sr)
	if got := names(sr.Tools); len(got) != 1 || got[0] != "weather_get_forecast" {
		t.Errorf("search by an alias: %v, want the tool under its own name only", got)
	}
	raw, err = b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.DescribeToolsName, json.RawMessage(`{"names":["forecast_weather_old"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var dr bindings.DescribeResult
	_ = json.Unmarshal(raw, &dr)
	if strings.Join(dr.Described, ",") != "weather_get_forecast" || !strings.Contains(dr.Hint, "forecast_weather_old is now weather_get_forecast") ||
		strings.Contains(dr.Declarations, "forecast_weather_old") {
		t.Errorf("describe by an alias: %+v", dr)
	}
}

// TestDescribeNoNames: describe_tools without names (null or empty) is an
// argument error the caller can fix, not an unknown tool.
func TestDescribeNoNames(t *testing.T) {
	b, r := newDiscovery(t)
	for _, args := range []string{`{"names":null}`, `{}`, `{"names":[]}`} {
		_, err := b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.DescribeToolsName, json.RawMessage(args))
		var e *sandbox.Error
		if !errors.As(err, &e) || e.Code != sandbox.EToolArgs || e.Hint == "" {
			t.Errorf("%s: %v, want E_TOOL_ARGS with a hint", args, err)
		}
	}
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{
		Source: `try { await tools.$describe(null) } catch (e) { return e.code }`}})
	if !res.OK || string(res.Result) != `"E_TOOL_ARGS"` {
		t.Errorf("tools.$describe(null): %s %v", res.Result, res.Error)
	}
}

// TestAddDiscoveryWith: the search's options reach search_tools — here
// an operator's word file naming a service the catalog lacks.
func TestAddDiscoveryWith(t *testing.T) {
	lx, err := search.ParseLexicon("ops.txt", "[services]\nnames: acmepay\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts      search.Options
		confident bool
	}{{search.Options{}, true}, {search.Options{Lexicon: lx}, false}} {
		cat, err := tools.NewCatalog(discoveryTool("shop_refund_order", "Refund a store order, fully or partly."),
			discoveryTool("shop_list_orders", "List store orders by status and date."))
		if err != nil {
			t.Fatal(err)
		}
		b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
		if err != nil {
			t.Fatal(err)
		}
		if err := bindings.AddDiscoveryWith(b, c.opts); err != nil {
			t.Fatal(err)
		}
		raw, err := b.CallDirect(context.Background(), bindings.LocalPrincipal, bindings.SearchToolsName,
			json.RawMessage(`{"query":"Refund the order in Acmepay."}`))
		if err != nil {
			t.Fatal(err)
		}
		var res bindings.SearchResult
		_ = json.Unmarshal(raw, &res)
		if res.Confident != c.confident {
			t.Errorf("with lexicon %v: %s, want confident %v", c.opts.Lexicon != nil, raw, c.confident)
		}
	}
}
