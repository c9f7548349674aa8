package wasmguest

import (
	"encoding/json"
	"errors"
	"strconv"
)

// ToolError is a failed tool call, as the host reports it: the same fields
// as a JavaScript program's ToolError. Code is one of the stable codes of
// docs/errors.md; match it with errors.Is and a sentinel (ErrToolDenied, ...)
// rather than by message.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Hint tells how to fix the call; may be empty.
	Hint string `json:"hint,omitempty"`
	// Retryable is true only for transient failures worth trying again.
	Retryable bool `json:"retryable,omitempty"`
	// AllowedValues is the closed set an argument must be one of (E_TOOL_ARGS).
	AllowedValues []any `json:"allowed_values,omitempty"`
	// Path is a JSON pointer into the arguments (E_TOOL_ARGS).
	Path string `json:"path,omitempty"`
	// Rule names the policy rule that decided a denial (E_TOOL_DENIED).
	Rule string `json:"rule,omitempty"`
	// Tool names the tool called.
	Tool string `json:"tool,omitempty"`
	// Reason refines Code: "invalid_input", "transient", "unavailable",
	// "denied", or empty for any other failure.
	Reason string `json:"reason,omitempty"`
}

func (e *ToolError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Is reports whether target is a *ToolError with the same Code and no
// Message: a sentinel such as ErrToolDenied.
func (e *ToolError) Is(target error) bool {
	t, ok := target.(*ToolError)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels for errors.Is: the codes a tool call can fail with.
var (
	ErrToolUnknown   = &ToolError{Code: "E_TOOL_UNKNOWN"}    // no such tool is bound
	ErrToolArgs      = &ToolError{Code: "E_TOOL_ARGS"}       // arguments do not match the tool's schema
	ErrToolDenied    = &ToolError{Code: "E_TOOL_DENIED"}     // the policy denied the call
	ErrToolCallLimit = &ToolError{Code: "E_TOOL_CALL_LIMIT"} // too many tool calls in one run
	ErrToolFailed    = &ToolError{Code: "E_TOOL_FAILED"}     // the tool itself failed
	ErrOutputLimit   = &ToolError{Code: "E_OUTPUT_LIMIT"}    // the result is over its budget
	ErrTimeout       = &ToolError{Code: "E_TIMEOUT"}         // the call or the run ran out of time
	ErrCancelled     = &ToolError{Code: "E_CANCELLED"}       // the run was cancelled
)

// decodeToolError decodes the error JSON of a failed call to tool. A
// payload that is not a well-formed error still gives a *ToolError
// (E_TOOL_FAILED), so that callers always get one kind of error for a
// failed call.
func decodeToolError(tool string, payload []byte) *ToolError {
	var e ToolError
	if err := json.Unmarshal(payload, &e); err != nil || e.Code == "" {
		return &ToolError{Code: "E_TOOL_FAILED", Tool: tool,
			Message: "the host reported a failure without a well-formed error"}
	}
	if e.Tool == "" {
		e.Tool = tool
	}
	return &e
}

// ABIError is a failure of the ABI itself: a host function returned a
// negative code (or a value the ABI does not define). A correct program on
// a correct host never sees one, except ABIAfterEnd when it keeps calling
// after the run ended.
type ABIError struct {
	// Op is the host function, e.g. "call_async".
	Op string
	// Code is what it returned: one of the ABI* codes, or another value
	// the ABI does not define.
	Code int32
}

// The ABI's error codes (version 1).
const (
	ABIBadArgument    = -1 // a pointer or length out of range
	ABIUnknownHandle  = -2 // no such handle, or it was already read
	ABIBufferTooSmall = -3
	ABITooManyHandles = -4 // too many calls started and not yet read
	ABIAfterEnd       = -5 // the run has ended
)

var abiCodeText = map[int32]string{
	ABIBadArgument:    "bad argument",
	ABIUnknownHandle:  "unknown handle",
	ABIBufferTooSmall: "buffer too small",
	ABITooManyHandles: "too many handles",
	ABIAfterEnd:       "the run has ended",
}

func (e *ABIError) Error() string {
	s := "wasmguest: " + e.Op + " returned " + strconv.Itoa(int(e.Code))
	if t, ok := abiCodeText[e.Code]; ok {
		s += " (" + t + ")"
	} else {
		s += " (not defined by ABI version " + strconv.Itoa(ABIVersion) + ")"
	}
	return s
}

// Is reports whether target is an *ABIError with the same Code and no Op,
// so that errors.Is(err, &ABIError{Code: ABIAfterEnd}) works.
func (e *ABIError) Is(target error) bool {
	t, ok := target.(*ABIError)
	return ok && t.Op == "" && t.Code == e.Code
}

// ErrNotGuest is returned by every function of the package outside a
// sandcall WebAssembly guest (any build but GOOS=wasip1 GOARCH=wasm).
var ErrNotGuest = errors.New("wasmguest: not running as a sandcall WebAssembly guest (build with GOOS=wasip1 GOARCH=wasm)")
