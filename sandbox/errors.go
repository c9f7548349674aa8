package sandbox

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"
)

// Code is one of the closed set of stable error codes of docs/errors.md.
// Clients and tests match on codes, never on messages.
type Code string

// The closed set of error codes.
const (
	ESyntax        Code = "E_SYNTAX"          // the program does not parse
	EGuestError    Code = "E_GUEST_ERROR"     // uncaught exception or trap
	ETimeout       Code = "E_TIMEOUT"         // wall-time limit reached
	EMemory        Code = "E_MEMORY"          // memory limit reached
	EStack         Code = "E_STACK"           // call stack limit reached
	ESourceLimit   Code = "E_SOURCE_LIMIT"    // source too large or too deeply nested
	EOutputLimit   Code = "E_OUTPUT_LIMIT"    // result or logs over their budget
	EUnsettled     Code = "E_UNSETTLED"       // the program's promise never settles
	EResultInvalid Code = "E_RESULT_INVALID"  // the result cannot be represented as JSON
	EToolUnknown   Code = "E_TOOL_UNKNOWN"    // no such tool is bound
	EToolArgs      Code = "E_TOOL_ARGS"       // arguments do not match the tool's schema
	EToolDenied    Code = "E_TOOL_DENIED"     // the policy denied the call
	EToolCallLimit Code = "E_TOOL_CALL_LIMIT" // too many tool calls in one run
	EToolFailed    Code = "E_TOOL_FAILED"     // the tool itself failed
	EModuleInvalid Code = "E_MODULE_INVALID"  // a WebAssembly module is malformed
	EModuleLimit   Code = "E_MODULE_LIMIT"    // a WebAssembly module is over a limit
	ECancelled     Code = "E_CANCELLED"       // the client cancelled the run
	EWorkerCrashed Code = "E_WORKER_CRASHED"  // the worker process died
	EBusy          Code = "E_BUSY"            // no capacity to run the program now
	EInternal      Code = "E_INTERNAL"        // a bug in sandcall
)

// Codes lists every code, in the order of docs/errors.md.
var Codes = []Code{
	ESyntax, EGuestError, ETimeout, EMemory, EStack, ESourceLimit, EOutputLimit,
	EUnsettled, EResultInvalid, EToolUnknown, EToolArgs, EToolDenied, EToolCallLimit,
	EToolFailed, EModuleInvalid, EModuleLimit, ECancelled, EWorkerCrashed, EBusy, EInternal,
}

// MaxMessageBytes caps Error.Message and Error.Hint.
const MaxMessageBytes = 4 << 10

// Error is sandcall's one error type. Every failure that reaches a guest, a
// client or an audit record is an *Error with a Code from the closed set.
//
// Use errors.Is with a sentinel (ErrTimeout, ErrToolArgs, ...) to test the kind:
// an *Error matches any *Error with the same Code and an empty Message.
// E_TIMEOUT also matches context.DeadlineExceeded, and E_CANCELLED matches
// context.Canceled.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Hint tells the caller how to fix the problem, when it can.
	Hint string `json:"hint,omitempty"`
	// Retryable is true only for transient failures worth trying again.
	Retryable bool `json:"retryable,omitempty"`
	// Tool names the tool a tool error is about.
	Tool string `json:"tool,omitempty"`
	// Path is a JSON pointer into the tool arguments (E_TOOL_ARGS).
	Path string `json:"path,omitempty"`
	// AllowedValues lists the closed set an argument must be one of (E_TOOL_ARGS).
	AllowedValues []any `json:"allowed_values,omitempty"`
	// Rule names the policy rule that decided a denial (E_TOOL_DENIED).
	Rule string `json:"rule,omitempty"`
	// Reason says, for a tool error, which kind of failure it is: one of
	// ReasonInvalidInput, ReasonTransient, ReasonUnavailable and
	// ReasonDenied, or empty for any other failure. It refines Code without
	// adding codes: E_TOOL_FAILED is either transient (worth retrying),
	// unavailable (the data does not exist: do not retry, do not guess) or a
	// plain failure. See WithDefaults.
	Reason string `json:"reason,omitempty"`
}

// The reasons of a tool error (Error.Reason).
const (
	ReasonInvalidInput = "invalid_input" // the arguments are wrong (E_TOOL_ARGS)
	ReasonTransient    = "transient"     // may succeed if made again (retryable E_TOOL_FAILED)
	ReasonUnavailable  = "unavailable"   // the data does not exist or is not available (E_TOOL_FAILED)
	ReasonDenied       = "denied"        // the policy or a person refused the call (E_TOOL_DENIED)
)

// defaultHints is the hint of an error that carries none (WithDefaults).
var defaultHints = map[Code]string{
	ESyntax:        "Fix the syntax error at the reported line, then run the program again.",
	EGuestError:    "Catch the exception, or fix the code that threw it.",
	ETimeout:       "Make the program do less work, or raise timeout_ms up to the server's maximum.",
	EMemory:        "Keep less data in memory: filter or aggregate as you go.",
	EStack:         "Replace deep recursion with a loop.",
	ESourceLimit:   "Send a shorter program.",
	EOutputLimit:   "Return or ask for less: filter, aggregate, narrow the arguments or paginate.",
	EUnsettled:     "Await every promise the program creates, and make sure each one settles.",
	EResultInvalid: "Return plain JSON data: objects, arrays, strings, finite numbers, booleans and null.",
	EToolUnknown:   "Call only the tools listed in run_code's description (tools.<name>), or find one with search_tools.",
	EToolArgs:      "Check the arguments against the tool's input schema (describe_tools shows it).",
	EToolDenied:    "Do not retry this call; the policy does not allow it. Ask the user if it is needed.",
	EToolCallLimit: "Make fewer calls: batch the work, or filter before calling.",
	EToolFailed:    "Check the arguments; if they are right, the tool itself failed: report it rather than retrying.",
	EModuleInvalid: "Send a valid WebAssembly module built for the sandcall host ABI.",
	EModuleLimit:   "Send a smaller module, or one that needs fewer resources.",
	ECancelled:     "The run was cancelled; run it again only if the user still wants it.",
	EWorkerCrashed: "Run the program again; if it crashes again, make it use less memory or fewer resources.",
	EBusy:          "The server is busy; try again shortly.",
	EInternal:      "This is a bug in sandcall; try again, and report it if it persists.",
}

// transientHint is the default hint of a retryable error.
const transientHint = "This failure is transient: try the call again later."

// WithDefaults returns e completed for a caller: a Reason derived from Code
// and Retryable when e has none (E_TOOL_ARGS: invalid_input; E_TOOL_DENIED:
// denied; a retryable E_TOOL_FAILED: transient), and a default Hint for its
// code when e has none. e itself is never modified (a tool may return a
// shared error value); e is returned as is when nothing is missing. A nil e
// gives nil.
func (e *Error) WithDefaults() *Error {
	if e == nil {
		return nil
	}
	reason := e.Reason
	if reason == "" {
		switch {
		case e.Code == EToolArgs:
			reason = ReasonInvalidInput
		case e.Code == EToolDenied:
			reason = ReasonDenied
		case e.Code == EToolFailed && e.Retryable:
			reason = ReasonTransient
		}
	}
	hint := e.Hint
	if hint == "" {
		hint = defaultHints[e.Code]
		if e.Retryable {
			hint = transientHint
		}
		if hint == "" {
			hint = defaultHints[EInternal]
		}
	}
	if reason == e.Reason && hint == e.Hint {
		return e
	}
	c := *e
	c.Reason, c.Hint = reason, hint
	return &c
}

// Sentinels for errors.Is.
var (
	ErrSyntax        = &Error{Code: ESyntax}
	ErrGuestError    = &Error{Code: EGuestError}
	ErrTimeout       = &Error{Code: ETimeout}
	ErrMemory        = &Error{Code: EMemory}
	ErrStack         = &Error{Code: EStack}
	ErrSourceLimit   = &Error{Code: ESourceLimit}
	ErrOutputLimit   = &Error{Code: EOutputLimit}
	ErrUnsettled     = &Error{Code: EUnsettled}
	ErrResultInvalid = &Error{Code: EResultInvalid}
	ErrToolUnknown   = &Error{Code: EToolUnknown}
	ErrToolArgs      = &Error{Code: EToolArgs}
	ErrToolDenied    = &Error{Code: EToolDenied}
	ErrToolCallLimit = &Error{Code: EToolCallLimit}
	ErrToolFailed    = &Error{Code: EToolFailed}
	ErrModuleInvalid = &Error{Code: EModuleInvalid}
	ErrModuleLimit   = &Error{Code: EModuleLimit}
	ErrCancelled     = &Error{Code: ECancelled}
	ErrWorkerCrashed = &Error{Code: EWorkerCrashed}
	ErrBusy          = &Error{Code: EBusy}
	ErrInternal      = &Error{Code: EInternal}
)

// Errorf returns an *Error with the given code, message and hint. The message
// and hint are capped at MaxMessageBytes.
func Errorf(code Code, hint, message string) *Error {
	return &Error{Code: code, Message: Cap(message, MaxMessageBytes), Hint: Cap(hint, MaxMessageBytes)}
}

func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// Is reports whether target is a sentinel of the same kind, or the context
// error that corresponds to e's code.
func (e *Error) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.Code == ETimeout
	case context.Canceled:
		return e.Code == ECancelled
	}
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Valid reports whether c is one of the closed set of codes.
func (c Code) Valid() bool {
	for _, k := range Codes {
		if k == c {
			return true
		}
	}
	return false
}

// AsError converts any error into an *Error. An *Error (wrapped or not) is
// returned as is; context errors become E_TIMEOUT and E_CANCELLED; anything
// else becomes fallback with a generic message, so that no Go error text
// (which may carry a host path) reaches a guest or a client unless the caller
// chose so.
func AsError(err error, fallback Code) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Errorf(ETimeout, "Make the program do less work, or raise timeout_ms up to the server's maximum.", "the run exceeded its time limit")
	case errors.Is(err, context.Canceled):
		return Errorf(ECancelled, "", "the run was cancelled")
	}
	if fallback == "" {
		fallback = EInternal
	}
	return Errorf(fallback, "", "internal error")
}

// Cap truncates s to at most n bytes without splitting a UTF-8 sequence, and
// marks the cut.
func Cap(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…(truncated)"
	cut := n - len(mark)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	var b strings.Builder
	b.Grow(cut + len(mark))
	b.WriteString(s[:cut])
	b.WriteString(mark)
	return b.String()
}
