package bindings

import (
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// redactError returns e with every secret shape in its message and hint
// replaced by [REDACTED] (tools.Redact), a copy when anything changed. Every
// error a caller gets goes through it: a validation message that echoes an
// argument ("expected integer, got string \"sk-live-…\"") never repeats a
// secret, nor does an upstream's or a program's own error text.
func redactError(e *sandbox.Error) *sandbox.Error {
	if e == nil {
		return nil
	}
	m, h := tools.Redact(e.Message), tools.Redact(e.Hint)
	if m == e.Message && h == e.Hint {
		return e
	}
	c := *e
	c.Message, c.Hint = m, h
	return &c
}
