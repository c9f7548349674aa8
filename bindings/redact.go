package bindings

import "github.com/sandcall/sandcall/tools"

// The redaction and escaping vocabulary (secret shapes, invisible
// characters) lives in package tools, which every layer above sandbox may
// import; these are its names here, for the broker and its callers.

// Redacted replaces a secret in audit records, logs and approval prompts.
const Redacted = tools.Redacted

var (
	// Redact replaces every secret shape in s (tools.Redact).
	Redact = tools.Redact
	// RedactJSON redacts the values of secret-named keys and secret
	// shapes in a JSON document (tools.RedactJSON).
	RedactJSON = tools.RedactJSON
	// Visible escapes characters a person cannot see (tools.Visible).
	Visible = tools.Visible
	// NewRedactHandler wraps a slog.Handler so that everything it writes
	// is redacted and made visible (tools.NewRedactHandler).
	NewRedactHandler = tools.NewRedactHandler
)

// RedactHandler is tools.RedactHandler.
type RedactHandler = tools.RedactHandler
