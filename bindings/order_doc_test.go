package bindings

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// TestAuthorizeBeforeValidateDocumented: the broker authorizes a call
// before it validates the arguments (a denied caller learns nothing of the
// schema: invalid arguments to a denied tool are E_TOOL_DENIED), and the
// reference pages say so in that order, never that arguments are checked
// before the policy.
func TestAuthorizeBeforeValidateDocumented(t *testing.T) {
	del := echo("delete_thing")
	del.Effects.Destructive = true
	del.InputSchema = &jsonschema.Schema{Type: "object", Required: []string{"id"},
		Properties: map[string]*jsonschema.Schema{"id": {Type: "string"}}}
	b := newBroker(t, BrokerConfig{}, del)
	r := newRun(b, sandbox.Limits{})
	if _, err := r.Call(context.Background(), "delete_thing", json.RawMessage(`{"id": 7}`)); code(err) != sandbox.EToolDenied {
		t.Errorf("invalid arguments to a denied call: %v, want E_TOOL_DENIED", err)
	}
	r.caller = tools.Direct
	if _, err := r.Call(context.Background(), "delete_thing", json.RawMessage(`{"id": 7}`)); code(err) != sandbox.EToolArgs {
		t.Errorf("invalid arguments to an allowed call: %v, want E_TOOL_ARGS", err)
	}

	wrong := regexp.MustCompile(`(?i)before the policy|validated against the tool's (input )?schema first|validated(,| and) authorized`)
	for _, f := range []string{"../README.md", "../docs/tool-sources.md", "../docs/security.md", "../docs/mcp.md", "../docs/policy.md", "../docs/guest-api.md", "../docs/errors.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if wrong.MatchString(line) {
				t.Errorf("%s:%d says arguments are validated before the policy decides: %q", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
