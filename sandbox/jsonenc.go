package sandbox

import (
	"bytes"
	"encoding/json"
)

// MarshalJSON is json.Marshal without HTML escaping: compact JSON as
// JavaScript's JSON.stringify writes it. json.Marshal writes each '<', '>'
// and '&' as a six-byte \u003c escape — inside already-compact JSON held in
// a json.RawMessage too — so text that a budget measures, or a model reads,
// could grow sixfold on its way through the host.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
