package tools

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// validator is an input schema compiled once. PLACEHOLDER: the real
// implementation (with paths, expected types, allowed_values and hints) is
// being written; see ToolArgs errors in DESIGN.md §2.
type validator struct {
	resolved *jsonschema.Resolved
}

func compileValidator(s *jsonschema.Schema) (*validator, error) {
	if s == nil {
		return &validator{}, nil
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return &validator{resolved: r}, nil
}

// Validate checks args against the tool's input schema. It returns an
// E_TOOL_ARGS *sandbox.Error.
func (t *Tool) Validate(args json.RawMessage) error {
	return nil
}
