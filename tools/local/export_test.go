package local

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
)

// schemaValid builds the input schema of ps and compiles it as the catalog
// does.
func schemaValid(ps []Param) (*jsonschema.Schema, error) {
	s, err := tools.ParseSchema(schemaJSON(ps))
	if err != nil {
		return nil, err
	}
	_, err = tools.NewCatalog(&tools.Tool{Name: "x", InputSchema: s, Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, nil
	}})
	return s, err
}
