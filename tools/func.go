package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/jsonscan"
)

// Func makes a typed Go function into a Tool. t supplies the name,
// description, examples and effects; Func fills in:
//
//   - InputSchema, inferred from In (a struct, or a pointer to one) with
//     jsonschema.For, unless t.InputSchema is set;
//   - OutputSchema, inferred from Out (or from T if Out is Encoded[T]),
//     unless t.OutputSchema is set;
//   - Handler: the validated arguments are decoded into In (unknown fields
//     rejected), fn runs, and its result is encoded as compact JSON (without
//     HTML escaping, like JSON.stringify).
//
// Inferred schemas are closed objects (additionalProperties: false) at every
// level; a field is required unless its json tag says omitempty or omitzero;
// the jsonschema tag is the field's description. Func also reads these
// struct tags (on a slice or array field, the value tags apply to its
// elements):
//
//	enum:"L1,L2,L3"    closed set of values (strings, integers, numbers or booleans, per the field's type)
//	minimum:"1"        number bounds, inclusive
//	maximum:"100"
//	minLength:"1"      string length bounds, in characters
//	maxLength:"64"
//	pattern:"^[A-Z]+$" Go RE2 syntax, matched against the whole value only if anchored
//	minItems:"1"       slice length bounds (on the slice itself)
//	maxItems:"50"
//
// # Errors
//
// If fn returns a *sandbox.Error (use ToolError, Transient, Failed or
// ArgError), the caller sees it as is, with Tool set. Any other error becomes
// E_TOOL_FAILED carrying the error's text, capped at MaxErrorTextBytes: that
// text reaches the model and the audit log, so tool authors must not put
// secrets, credentials or host paths in error text. A context error becomes
// E_CANCELLED (context.Canceled) or a retryable E_TOOL_FAILED (deadline). A
// panic in fn is recovered and reported as E_TOOL_FAILED without its value
// or stack (which are logged with slog at error level).
func Func[In, Out any](t Tool, fn func(ctx context.Context, in In) (Out, error)) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tools: Func %q: nil function", t.Name)
	}
	if t.Handler != nil {
		return nil, fmt.Errorf("tools: Func %q: Handler is set; Func makes it", t.Name)
	}
	inType := reflect.TypeFor[In]()
	base := inType
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tools: Func %q: input type %v is not a struct or a pointer to a struct", t.Name, inType)
	}
	inferred := t.InputSchema == nil
	if inferred {
		s, err := SchemaFor(base)
		if err != nil {
			return nil, fmt.Errorf("tools: Func %q: input schema: %w", t.Name, err)
		}
		t.InputSchema = s
	}
	if t.OutputSchema == nil {
		outType := reflect.TypeFor[Out]()
		if et, ok := reflect.Zero(outType).Interface().(encodedJSON); ok {
			outType = et.encodedType()
		}
		s, err := SchemaFor(outType)
		if err != nil {
			return nil, fmt.Errorf("tools: Func %q: output schema: %w", t.Name, err)
		}
		t.OutputSchema = s
	}
	v, err := compileValidator(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tools: Func %q: input schema: %w", t.Name, err)
	}
	t.validator = v
	name := t.Name
	var plan *flatPlan
	if inferred {
		plan = planFor(base)
	}
	isPtr := inType.Kind() == reflect.Pointer
	t.Handler = func(ctx context.Context, args json.RawMessage) (res json.RawMessage, err error) {
		defer func() {
			if r := recover(); r != nil {
				slog.Error("tool panicked", "tool", name, "panic", r)
				res, err = nil, &sandbox.Error{Code: sandbox.EToolFailed, Message: "the tool failed unexpectedly", Tool: name}
			}
		}()
		var in In
		if derr := decodeInto(args, &in, plan, isPtr, base, !inferred); derr != nil {
			derr.Tool = name
			return nil, derr
		}
		out, ferr := fn(ctx, in)
		if ferr != nil {
			return nil, toolError(name, ferr)
		}
		if e, ok := any(out).(encodedJSON); ok {
			return e.encodedBytes(), nil
		}
		return encodeResult(name, out)
	}
	return &t, nil
}

// MustFunc is like Func but panics on error. Use it for tools defined at
// package level, whose types are fixed at compile time.
func MustFunc[In, Out any](t Tool, fn func(ctx context.Context, in In) (Out, error)) *Tool {
	tool, err := Func(t, fn)
	if err != nil {
		panic(err)
	}
	return tool
}

// Encoded is a value of type T already encoded as compact JSON. A Func whose
// Out is Encoded[T] returns the bytes as they are, without encoding them
// again, and describes T in its output schema: use it to serve cached
// results. The bytes must be valid compact JSON, and the handler's caller
// owns them: return a copy of anything shared.
type Encoded[T any] []byte

// Encode encodes v as compact JSON, without HTML escaping.
func Encode[T any](v T) (Encoded[T], error) {
	b, err := marshalCompact(v)
	return Encoded[T](b), err
}

type encodedJSON interface {
	encodedType() reflect.Type
	encodedBytes() json.RawMessage
}

func (Encoded[T]) encodedType() reflect.Type       { return reflect.TypeFor[T]() }
func (e Encoded[T]) encodedBytes() json.RawMessage { return json.RawMessage(e) }

// decodeInto decodes args into *in (an In, which is a struct or a pointer to
// one), with the fast flat decoder when there is a plan.
func decodeInto[In any](args json.RawMessage, in *In, plan *flatPlan, isPtr bool, base reflect.Type, strict bool) *sandbox.Error {
	if plan != nil {
		data := jsonscan.Trim(args)
		if len(data) == 0 || string(data) == "null" {
			data = emptyObject
		}
		var dst unsafe.Pointer
		if isPtr {
			p := reflect.New(base)
			reflect.ValueOf(in).Elem().Set(p)
			dst = p.UnsafePointer()
		} else {
			dst = unsafe.Pointer(in)
		}
		if plan.decode(data, dst) {
			return nil
		}
		var zero In
		*in = zero // start again: the fallback reports the error
	}
	return decodeArgs(args, in, strict)
}

// decodeArgs decodes (already validated) arguments into v, rejecting
// unknown fields. Empty or null arguments decode as {}.
//
// When the input schema was inferred from v's type it is closed at every
// level, so validation has already rejected every unknown field (and every
// key that differs from a field's name only in case, which encoding/json
// would accept): the faster json.Unmarshal then suffices. A schema given by
// the tool's author may be open, so strict uses a Decoder with
// DisallowUnknownFields.
func decodeArgs(args json.RawMessage, v any, strict bool) *sandbox.Error {
	data := jsonscan.Trim(args)
	if len(data) == 0 || string(data) == "null" {
		data = emptyObject
	}
	if !strict {
		if err := json.Unmarshal(data, v); err != nil {
			return decodeError(err)
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return &sandbox.Error{Code: sandbox.EToolArgs, Message: "unexpected data after the arguments object", Hint: "Pass the arguments as one JSON object."}
	}
	return nil
}

func decodeError(err error) *sandbox.Error {
	e := &sandbox.Error{Code: sandbox.EToolArgs, Message: "the arguments do not match the tool's parameters", Hint: "Check the arguments against the tool's input schema."}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		segs := strings.Split(te.Field, ".")
		for i, s := range segs {
			segs[i] = escapePointer(s)
		}
		e.Path = "/" + strings.Join(segs, "/")
		e.Message = sandbox.Cap(fmt.Sprintf("argument %q: %s does not fit here", te.Field, te.Value), sandbox.MaxMessageBytes)
		if te.Type != nil {
			switch te.Type.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				e.Hint = "Pass an integer in range, written without a decimal point or exponent."
			}
		}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		e.Message = "unknown argument " + sandbox.Cap(strings.TrimPrefix(err.Error(), "json: unknown field "), 2*maxEcho)
	}
	return e
}

// marshalCompact encodes v as compact JSON without HTML escaping (like
// JSON.stringify), so "<" stays "<".
func marshalCompact(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(b, []byte(`\u00`)) {
		b = unescapeHTML(b)
	}
	return b, nil
}

// unescapeHTML undoes json.Marshal's HTML escaping (\u003c, \u003e,
// \u0026) in its well-formed output, leaving every other escape alone. This
// is what Encoder.SetEscapeHTML(false) produces, without an Encoder's cost.
func unescapeHTML(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out = append(out, '<')
				i += 5
				continue
			case "003e":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		out = append(out, c, b[i+1]) // any other escape, kept whole
		i++
	}
	return out
}

func encodeResult(name string, out any) (json.RawMessage, error) {
	b, err := marshalCompact(out)
	if err != nil {
		return nil, &sandbox.Error{Code: sandbox.EToolFailed, Message: "the tool's result cannot be encoded as JSON", Tool: name}
	}
	return b, nil
}

// MaxErrorTextBytes caps the text of a plain Go error returned by a tool
// function when it becomes an E_TOOL_FAILED message.
const MaxErrorTextBytes = 1024

// toolError converts an error returned by a tool function.
func toolError(name string, err error) *sandbox.Error {
	var se *sandbox.Error
	if errors.As(err, &se) {
		c := *se // never mutate the tool's (possibly shared) error
		if c.Tool == "" {
			c.Tool = name
		}
		c.Message = sandbox.Cap(c.Message, sandbox.MaxMessageBytes)
		c.Hint = sandbox.Cap(c.Hint, sandbox.MaxMessageBytes)
		return &c
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &sandbox.Error{Code: sandbox.ECancelled, Message: "the tool call was cancelled", Tool: name}
	case errors.Is(err, context.DeadlineExceeded):
		return &sandbox.Error{Code: sandbox.EToolFailed, Message: "the tool call timed out", Retryable: true,
			Reason: sandbox.ReasonTransient, Tool: name}
	}
	return &sandbox.Error{Code: sandbox.EToolFailed, Message: sandbox.Cap(err.Error(), MaxErrorTextBytes), Tool: name}
}

// ToolError returns a tool error with the given code, message and hint
// (each capped at sandbox.MaxMessageBytes). A tool function returns it to
// tell the model exactly what went wrong and how to fix it. The message and
// hint reach the model and the audit log: never put secrets in them.
func ToolError(code sandbox.Code, message, hint string) *sandbox.Error {
	return sandbox.Errorf(code, hint, message)
}

// Failed returns an E_TOOL_FAILED error that is not worth retrying (no
// reason: a plain failure of the tool).
func Failed(message, hint string) *sandbox.Error {
	return sandbox.Errorf(sandbox.EToolFailed, hint, message)
}

// Transient returns a retryable E_TOOL_FAILED error (reason "transient"):
// the call may succeed if made again (a timeout, a rate limit, an
// unavailable backend). The broker retries transient errors of idempotent
// tools only (Effects.Idempotent), with a short backoff; other callers see
// retryable: true.
func Transient(message, hint string) *sandbox.Error {
	e := sandbox.Errorf(sandbox.EToolFailed, hint, message)
	e.Retryable = true
	e.Reason = sandbox.ReasonTransient
	return e
}

// Unavailable returns an E_TOOL_FAILED error with reason "unavailable" for
// data that does not exist or is not available (a missing price, an
// unknown period): not worth retrying, and distinct from an invalid
// argument (ArgError) and a transient failure (Transient). Never return a
// zero or empty value in its place.
func Unavailable(message, hint string) *sandbox.Error {
	e := sandbox.Errorf(sandbox.EToolFailed, hint, message)
	e.Reason = sandbox.ReasonUnavailable
	return e
}

// ArgError returns an E_TOOL_ARGS error (reason "invalid_input") about the
// argument at path (a JSON pointer such as "/quarter"), for checks a schema
// cannot express.
func ArgError(path, message, hint string) *sandbox.Error {
	e := sandbox.Errorf(sandbox.EToolArgs, hint, message)
	e.Path = path
	e.Reason = sandbox.ReasonInvalidInput
	return e
}

// SchemaFor infers the JSON Schema of a Go type as Func does: jsonschema.For
// plus the enum and bounds struct tags documented on Func.
func SchemaFor(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := applyTags(s, t, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	return s, nil
}

// applyTags walks a Go type and its inferred schema together and applies the
// struct tags of each field to the field's schema.
func applyTags(s *jsonschema.Schema, t reflect.Type, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(s.Items, t.Elem(), seen)
	case reflect.Map:
		return applyTags(s.AdditionalProperties, t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return nil
		}
		seen[t] = true
		defer delete(seen, t)
		for _, f := range reflect.VisibleFields(t) {
			if f.Anonymous || !f.IsExported() {
				continue
			}
			name, ok := jsonFieldName(f)
			if !ok {
				continue
			}
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			if err := applyFieldTags(ps, f); err != nil {
				return fmt.Errorf("field %s.%s: %w", t, f.Name, err)
			}
			if err := applyTags(ps, f.Type, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonFieldName(f reflect.StructField) (string, bool) {
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		return f.Name, true
	}
	name, _, found := strings.Cut(tag, ",")
	if name == "-" && !found {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

func applyFieldTags(s *jsonschema.Schema, f reflect.StructField) error {
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	target, tt := s, ft // where value tags go
	if (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && ft.Elem().Kind() != reflect.Uint8 {
		target, tt = s.Items, ft.Elem()
		for tt.Kind() == reflect.Pointer {
			tt = tt.Elem()
		}
		if target == nil {
			target = s
		}
	}
	intTag := func(key string, dst **int) error {
		v, ok := f.Tag.Lookup(key)
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return fmt.Errorf("%s tag %q: want a non-negative integer", key, v)
		}
		*dst = &n
		return nil
	}
	floatTag := func(key string, dst **float64) error {
		v, ok := f.Tag.Lookup(key)
		if !ok {
			return nil
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("%s tag %q: want a number", key, v)
		}
		*dst = &x
		return nil
	}
	if err := intTag("minItems", &s.MinItems); err != nil {
		return err
	}
	if err := intTag("maxItems", &s.MaxItems); err != nil {
		return err
	}
	if err := intTag("minLength", &target.MinLength); err != nil {
		return err
	}
	if err := intTag("maxLength", &target.MaxLength); err != nil {
		return err
	}
	if err := floatTag("minimum", &target.Minimum); err != nil {
		return err
	}
	if err := floatTag("maximum", &target.Maximum); err != nil {
		return err
	}
	if p, ok := f.Tag.Lookup("pattern"); ok {
		target.Pattern = p
	}
	if ev, ok := f.Tag.Lookup("enum"); ok {
		vals, err := parseEnum(ev, tt)
		if err != nil {
			return err
		}
		target.Enum = vals
	}
	return nil
}

// parseEnum parses an enum tag for a field of type t.
func parseEnum(tag string, t reflect.Type) ([]any, error) {
	var out []any
	for _, raw := range strings.Split(tag, ",") {
		v := strings.TrimSpace(raw)
		switch t.Kind() {
		case reflect.String:
			out = append(out, v)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("enum tag value %q: want an integer", v)
			}
			out = append(out, n)
		case reflect.Float32, reflect.Float64:
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("enum tag value %q: want a number", v)
			}
			out = append(out, x)
		case reflect.Bool:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("enum tag value %q: want a boolean", v)
			}
			out = append(out, b)
		default:
			return nil, fmt.Errorf("enum tag on a field of type %v: want a string, number or boolean type", t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty enum tag")
	}
	return out, nil
}
