package bindings_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/tools"
)

// TestDescribeManyLargeTools: describing several large tools (declarations
// full of quotes, newlines and <b>, which JSON escapes) answers with the
// ones that fit and lists the rest as omitted; it used to count the raw
// declarations against the budget and fail the whole call with
// E_OUTPUT_LIMIT once escaping pushed the answer past it.
func TestDescribeManyLargeTools(t *testing.T) {
	var ts []*tools.Tool
	var names []string
	for i := 0; i < 6; i++ {
		props := map[string]*jsonschema.Schema{}
		for j := 0; j < 60; j++ {
			var enum []any
			for k := 0; k < 30; k++ {
				enum = append(enum, fmt.Sprintf("v%d", k))
			}
			props[fmt.Sprintf("p%d", j)] = &jsonschema.Schema{Type: "string", Enum: enum, Description: `a "quoted" <b>thing</b>`}
		}
		tl := discoveryTool(fmt.Sprintf("big_tool%d", i), "Big.")
		tl.InputSchema = &jsonschema.Schema{Type: "object", Properties: props}
		ts = append(ts, tl)
		names = append(names, tl.Name)
	}
	cat, err := tools.NewCatalog(ts...)
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
	args, _ := json.Marshal(map[string]any{"names": names})
	out, err := b.DirectOutcome(context.Background(), bindings.DirectCall{Principal: bindings.LocalPrincipal, Tool: bindings.DescribeToolsName, Args: args})
	if err != nil {
		t.Fatalf("describe %d large tools: %v", len(names), err)
	}
	var r bindings.DescribeResult
	if err := json.Unmarshal(out.Result, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Described) == 0 || len(r.Omitted) == 0 || len(r.Described)+len(r.Omitted) != len(names) || len(out.Notes) != 0 {
		t.Errorf("described %v, omitted %v, notes %v", r.Described, r.Omitted, out.Notes)
	}
}
