package parity

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sandcall/sandcall/sandbox"
)

// fakeHost plays the broker for one case: each listed tool behaves as its
// line in the case's -- host -- section says, and returns the
// *sandbox.Error values the broker would (with Tool set). Any other name
// is E_TOOL_UNKNOWN.
type fakeHost struct {
	tools map[string]toolSpec
}

type toolSpec struct {
	behaviour string
	args      []string
}

var behaviours = map[string]int{"ping": 0, "echo": 0, "fail_transient": 0, "denied": 1, "enum": 2}

// parseHost reads "NAME BEHAVIOUR [ARGS]" lines.
func parseHost(spec string) (*fakeHost, error) {
	h := &fakeHost{tools: map[string]toolSpec{}}
	for _, line := range strings.Split(spec, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%q: want NAME BEHAVIOUR [ARGS]", line)
		}
		n, ok := behaviours[f[1]]
		if !ok {
			return nil, fmt.Errorf("%q: unknown behaviour %q", line, f[1])
		}
		if len(f)-2 != n {
			return nil, fmt.Errorf("%q: %s takes %d arguments", line, f[1], n)
		}
		h.tools[f[0]] = toolSpec{behaviour: f[1], args: f[2:]}
	}
	return h, nil
}

// names are the tools bound in a JavaScript guest.
func (h *fakeHost) names() []string {
	var ns []string
	for n := range h.tools {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

func (h *fakeHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	spec, ok := h.tools[tool]
	if !ok {
		return nil, &sandbox.Error{Code: sandbox.EToolUnknown, Tool: tool,
			Message: fmt.Sprintf("no tool named %q", tool), Hint: "Use search_tools to find tools."}
	}
	switch spec.behaviour {
	case "ping":
		var a struct{ N int64 }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, &sandbox.Error{Code: sandbox.EToolArgs, Tool: tool, Path: "/n", Message: "n must be an integer"}
		}
		return strconv.AppendInt(nil, a.N+1, 10), nil
	case "echo":
		return args, nil
	case "fail_transient":
		return nil, &sandbox.Error{Code: sandbox.EToolFailed, Tool: tool, Message: "upstream unavailable", Hint: "Try again later.", Retryable: true}
	case "denied":
		return nil, &sandbox.Error{Code: sandbox.EToolDenied, Tool: tool, Message: "denied by policy", Hint: "Ask a person.", Rule: spec.args[0]}
	case "enum":
		field, allowed := spec.args[0], strings.Split(spec.args[1], ",")
		var a map[string]any
		_ = json.Unmarshal(args, &a)
		v, _ := a[field].(string)
		if slices.Contains(allowed, v) {
			return args, nil
		}
		av := make([]any, len(allowed))
		for i, s := range allowed {
			av[i] = s
		}
		return nil, &sandbox.Error{Code: sandbox.EToolArgs, Tool: tool, Path: "/" + field,
			Message:       field + ` "` + v + `" is not one of the allowed values`,
			Hint:          "Use one of the allowed values.",
			AllowedValues: av}
	}
	return nil, &sandbox.Error{Code: sandbox.EInternal, Message: "bad fake host"}
}
