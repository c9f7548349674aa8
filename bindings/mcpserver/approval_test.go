package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/policy"
	"github.com/sandcall/sandcall/sandbox"
)

func mustPolicy(t *testing.T, src string) bindings.Authorizer {
	t.Helper()
	c, err := policy.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return bindings.NewPolicyAuthorizer(c)
}

const approvePing = `version: 1
rules:
  - name: ask-ping
    tools: [ping]
    require_approval: true
`

func TestApprovalElicitation(t *testing.T) {
	// Protocol 2026-07-28 forbids server requests during a call (SEP-2322):
	// the call answers input-required instead, and the go-sdk client puts
	// it to its handler and sends the answer back (approvalstate.go).
	h := newHarness(t, options{auth: mustPolicy(t, approvePing), protocol: "",
		client: mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}})
	if res := h.call(t, "ping", map[string]any{"n": 1}); res.IsError {
		t.Errorf("2026-07-28: %s", textJSON(t, res))
	}
	for _, proto := range []string{"2025-06-18", "2025-11-25"} {
		for _, accept := range []bool{true, false} {
			var asked []string
			handler := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, req.Params.Message)
				if accept {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
				}
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			h := newHarness(t, options{auth: mustPolicy(t, approvePing), protocol: proto,
				client: mcp.ClientOptions{ElicitationHandler: handler}})
			res := h.call(t, "ping", map[string]any{"n": 41})
			if accept {
				if res.IsError {
					t.Fatalf("proto %q: approved call failed: %s", proto, textJSON(t, res))
				}
			} else {
				e := wantCode(t, res, sandbox.EToolDenied)
				if e.Rule != "ask-ping" || !strings.Contains(e.Message, "declined") {
					t.Errorf("declined: %+v", e)
				}
			}
			// The same from a program: the call is asked about too.
			res = h.call(t, "run_code", map[string]any{"code": `try { return await tools.ping({n: 1}) } catch (e) { return e.code }`})
			out := decodeStructured[sandbox.Result](t, res)
			want := `2`
			if !accept {
				want = `"E_TOOL_DENIED"`
			}
			if string(out.Result) != want {
				t.Errorf("proto %q accept %v: program returned %s", proto, accept, out.Result)
			}
			if len(asked) != 2 || !strings.Contains(asked[0], "ping") || !strings.Contains(asked[0], `n: 41`) ||
				!strings.Contains(asked[1], "a program") {
				t.Errorf("asked %q", asked)
			}
		}
	}
}

func TestApprovalClientWithoutElicitation(t *testing.T) {
	h := newHarness(t, options{auth: mustPolicy(t, approvePing)})
	e := wantCode(t, h.call(t, "ping", map[string]any{"n": 1}), sandbox.EToolDenied)
	if !strings.Contains(e.Hint, "this tool needs a person's approval and your MCP client does not support elicitation") &&
		!strings.Contains(e.Hint, "This tool needs a person's approval and your MCP client does not support elicitation") {
		t.Errorf("hint %q", e.Hint)
	}
}

const financeOnly = `version: 1
rules:
  - name: finance-ping
    tools: [ping]
    allowed_callers: [direct, code]
    when: '"finance" in principal.roles'
    message: only finance may ping
`
