package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/tools"
)

// roleGate exposes tools named payroll_* only to principals with the
// finance role; everything else to everyone.
type roleGate struct{}

func (roleGate) allowed(name string, p bindings.Principal) bool {
	return !strings.HasPrefix(name, "payroll_") || slices.Contains(p.Roles, "finance")
}

func (a roleGate) Authorize(_ context.Context, c *bindings.CallInfo) bindings.Decision {
	return bindings.Decision{Allow: a.allowed(c.Tool.Name, c.Principal), Rule: "finance_only"}
}

func (a roleGate) Exposes(t *tools.Tool, _ tools.Caller, p bindings.Principal) bool {
	return a.allowed(t.Name, p)
}

// TestRunCodeDescriptionPerPrincipal: over authenticated HTTP, run_code's
// description lists the bindings of the request's principal, not those of
// the server's default principal: a principal never reads the names and
// signatures of tools the policy hides from it.
func TestRunCodeDescriptionPerPrincipal(t *testing.T) {
	tool := func(name, desc string) *tools.Tool {
		return &tools.Tool{Name: name, Description: desc, AllowedCallers: []tools.Caller{tools.Code},
			Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }}
	}
	runner := newPipeline(t, bindings.BrokerConfig{Authorizer: roleGate{}}, bindings.RunnerConfig{}, tool("payroll_salaries", "Lists every employee's salary."), tool("get_weather", "Gets the weather."))
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler),
		Principal: bindings.Principal{ID: "ops", Roles: []string{"finance"}},
		Tokens: []bearer.Token{
			{SHA256: bearer.HashToken("a-token"), Principal: bindings.Principal{ID: "alice"}},
			{SHA256: bearer.HashToken("f-token"), Principal: bindings.Principal{ID: "fiona", Roles: []string{"finance"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	desc := func(tok string) string {
		res, err := connectBearer(t, ts.URL+"/mcp", tok).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == mcpserver.RunCodeName {
				return tl.Description
			}
		}
		t.Fatal("run_code is not listed")
		return ""
	}
	if d := desc("a-token"); strings.Contains(d, "payroll_salaries") || !strings.Contains(d, "get_weather") {
		t.Errorf("alice's run_code description:\n%s", d)
	}
	if d := desc("f-token"); !strings.Contains(d, "payroll_salaries") || !strings.Contains(d, "get_weather") {
		t.Errorf("fiona's run_code description:\n%s", d)
	}
}
