// Package prelude holds the JavaScript prelude that every guest runtime
// evaluates before the program: the ToolError class that failed tool calls
// reject with (docs/guest-api.md).
//
// The prelude is engine data, not an engine: sandbox/js compiles it once and
// runs the compiled form in each fresh runtime. It must not depend on anything
// but the ECMAScript built-ins, and it runs before any guest code, so the
// built-ins it sees are pristine.
package prelude

import _ "embed"

// JS is the prelude source. Evaluated as a script, its completion value is the
// ToolError constructor; the engine binds it as the global ToolError.
//
//go:embed prelude.js
var JS string
