package wasmguest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ABIVersion is the version of the sandcall host module this package
// speaks. The package checks the host's abi_version once, before its first
// call.
const ABIVersion = 1

// host is the sandcall host module as the package uses it: the imports of
// ABIVersion, with Go strings and slices in place of pointer/length pairs.
// Under wasip1 it is the real imports (abi_wasip1.go); elsewhere it is nil
// (abi_other.go), and tests put a fake in its place.
type host interface {
	version() int32
	call(name string, args []byte) int32
	callAsync(name string, args []byte) int32
	wait(handle int32) int32
	resultLen(handle int32) int32
	resultRead(handle int32, buf []byte) int32
	inputLen() int32
	inputRead(buf []byte) int32
	setResult(b []byte) int32
	progress(b []byte) int32
	log(b []byte)
}

// versionCheck remembers the outcome of the one abi_version check.
type versionCheck struct {
	done bool
	err  error
}

// checked is replaced, not reset, by tests that swap the host.
var checked = new(versionCheck)

// ready reports whether the package can talk to a host that speaks
// ABIVersion. The Go runtime has one thread under wasip1 and ready makes
// no host call that can yield, so a plain flag is enough.
func ready() error {
	if abi == nil {
		return ErrNotGuest
	}
	if !checked.done {
		if v := abi.version(); v != ABIVersion {
			checked.err = errors.New("wasmguest: the host speaks ABI version " + strconv.Itoa(int(v)) +
				", this package version " + strconv.Itoa(ABIVersion))
		}
		checked.done = true
	}
	return checked.err
}

var emptyObject = []byte("{}")

// marshal is compact JSON without HTML escaping, like JavaScript's
// JSON.stringify (and the host's own encoder), so that a Go guest's result
// is byte for byte what the same JavaScript program returns.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// marshalArgs encodes a call's arguments; nil means no arguments ({}).
func marshalArgs(name string, args any) ([]byte, error) {
	if args == nil {
		return emptyObject, nil
	}
	b, err := marshal(args)
	if err != nil {
		return nil, fmt.Errorf("wasmguest: encoding the arguments of %s: %w", name, err)
	}
	return b, nil
}

// unmarshal decodes a call's result into out, if out is not nil. A
// *json.RawMessage gets the result's bytes as the host sent them (compact
// JSON the host checked), without a second scan: encoding/json's scanner
// costs a Go guest tens of milliseconds on a few hundred KB.
func unmarshal(name string, res []byte, out any) error {
	switch o := out.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*o = res
		return nil
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("wasmguest: decoding the result of %s: %w", name, err)
	}
	return nil
}

// Call calls the tool name with args (marshalled with encoding/json; nil
// sends {}) and waits for its result, which it unmarshals into out unless
// out is nil. A failed call returns a *ToolError; see the package doc.
func Call(name string, args any, out any) error {
	a, err := marshalArgs(name, args)
	if err != nil {
		return err
	}
	res, err := RawCall(name, a)
	if err != nil {
		return err
	}
	return unmarshal(name, res, out)
}

// RawCall calls the tool name with argsJSON, a JSON object (empty means
// {}), and returns the result's compact JSON. A failed call returns a
// *ToolError.
func RawCall(name string, argsJSON []byte) ([]byte, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	if len(argsJSON) == 0 {
		argsJSON = emptyObject
	}
	h := abi.call(name, argsJSON)
	if h <= 0 {
		return nil, &ABIError{Op: "call", Code: h}
	}
	return collect(name, h)
}

// collect waits for the call behind handle h, reads its payload (which
// frees the handle) and returns the result or the tool's error.
func collect(name string, h int32) ([]byte, error) {
	status := abi.wait(h)
	if status < 0 || status > 1 {
		return nil, &ABIError{Op: "wait", Code: status}
	}
	n := abi.resultLen(h)
	if n < 0 {
		return nil, &ABIError{Op: "result_len", Code: n}
	}
	buf := make([]byte, n)
	w := abi.resultRead(h, buf)
	if w < 0 || w > n {
		return nil, &ABIError{Op: "result_read", Code: w}
	}
	buf = buf[:w]
	if status == 1 {
		return nil, decodeToolError(name, buf)
	}
	return buf, nil
}

// Pending is a call started by Start. Wait collects it, once.
type Pending struct {
	name   string
	handle int32
	waited bool
}

// Start starts a call of the tool name with args and returns without
// waiting: calls started one after another run in parallel on the host.
// Every call started must be collected with Wait, which frees its handle;
// the host holds a bounded number of handles (1,000 in ABI version 1;
// ABITooManyHandles beyond), which CallAll and Map handle for you.
func Start(name string, args any) (*Pending, error) {
	a, err := marshalArgs(name, args)
	if err != nil {
		return nil, err
	}
	if err := ready(); err != nil {
		return nil, err
	}
	h := abi.callAsync(name, a)
	if h <= 0 {
		return nil, &ABIError{Op: "call_async", Code: h}
	}
	return &Pending{name: name, handle: h}, nil
}

// errWaited is returned by a second Wait on the same Pending.
var errWaited = &ABIError{Op: "wait (already waited)", Code: ABIUnknownHandle}

// Wait blocks until the call completes and unmarshals its result into out
// unless out is nil. A failed call returns a *ToolError. Wait may be
// called once; a Pending is not safe for concurrent use.
func (p *Pending) Wait(out any) error {
	if p.waited {
		return errWaited
	}
	p.waited = true
	res, err := collect(p.name, p.handle)
	if err != nil {
		return err
	}
	return unmarshal(p.name, res, out)
}

// Request is one call of CallAll.
type Request struct {
	Name string
	Args any // marshalled with encoding/json; nil sends {}
}

// CallAll makes all the calls in parallel and waits for all of them. The
// result of calls[i] is unmarshalled into outs[i] (unless outs is nil or
// outs[i] is nil) and its error is errs[i]; errs always has len(calls).
// If the host runs out of handles, CallAll waits for the oldest calls
// before starting more, so any number of calls works.
func CallAll(calls []Request, outs []any) (errs []error) {
	errs = make([]error, len(calls))
	if outs != nil && len(outs) != len(calls) {
		err := errors.New("wasmguest: CallAll with " + strconv.Itoa(len(outs)) + " outs for " +
			strconv.Itoa(len(calls)) + " calls")
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	out := func(i int) any {
		if outs == nil {
			return nil
		}
		return outs[i]
	}
	pending := make([]*Pending, len(calls))
	oldest := 0 // calls before it have been collected or never started
	collectOldest := func() bool {
		for ; oldest < len(calls); oldest++ {
			if p := pending[oldest]; p != nil && !p.waited {
				errs[oldest] = p.Wait(out(oldest))
				oldest++
				return true
			}
		}
		return false
	}
	for i, c := range calls {
		for {
			p, err := Start(c.Name, c.Args)
			var ae *ABIError
			if err != nil && errors.As(err, &ae) && ae.Code == ABITooManyHandles && collectOldest() {
				continue // a handle is free now: try again
			}
			pending[i], errs[i] = p, err
			break
		}
	}
	for collectOldest() {
	}
	return errs
}

// Map calls the tool name once for each element of args, all in parallel,
// and returns the results in the order of args. If any call fails, err is
// the failure of the first one in that order, and the other results are
// still filled in.
//
//	budgets, err := wasmguest.Map[Budget]("get_budget_by_level", []map[string]string{{"level": "L1"}, {"level": "L2"}})
func Map[R, A any](name string, args []A) (results []R, err error) {
	results = make([]R, len(args))
	calls := make([]Request, len(args))
	outs := make([]any, len(args))
	for i := range args {
		calls[i] = Request{Name: name, Args: args[i]}
		outs[i] = &results[i]
	}
	for _, err := range CallAll(calls, outs) {
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// Input unmarshals the run's input into v. Without input (the JSON null)
// v is left as it is, so defaults set before the call stay.
func Input(v any) error {
	b, err := RawInput()
	if err != nil || len(b) == 0 || string(b) == "null" {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("wasmguest: decoding the input: %w", err)
	}
	return nil
}

// RawInput returns the JSON of the run's input: null without input.
func RawInput() ([]byte, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	n := abi.inputLen()
	if n < 0 {
		return nil, &ABIError{Op: "input_len", Code: n}
	}
	if n == 0 { // not in ABI version 1, which says null: the same thing
		return []byte("null"), nil
	}
	buf := make([]byte, n)
	w := abi.inputRead(buf)
	if w < 0 || w > n {
		return nil, &ABIError{Op: "input_read", Code: w}
	}
	return buf[:w], nil
}

// Return sets the program's result to v, marshalled with encoding/json as
// compact JSON without HTML escaping (as JSON.stringify does). A later
// Return replaces the result; without one the result is null. The host
// checks the result when the run ends: over the run's result budget (256
// KiB by default) the run fails with E_OUTPUT_LIMIT.
func Return(v any) error { return store(v, "the result", "set_result", host.setResult) }

// Progress saves v, encoded as JSON like Return's value, as the run's
// partial result: if the run then fails (a timeout, a cancellation), its
// result reports the last value saved as "partial", so the work done so far
// is not lost. A value over the result budget is refused (an *ABIError with
// code -6) and nothing is stored. Call it now and then in long runs, with a
// small summary rather than raw data.
func Progress(v any) error {
	return store(v, "the progress value", "progress", host.progress)
}

// store encodes v (what it is, for the error) and hands it to the host's
// import op through call (abi is nil outside wasip1: ready checks first).
func store(v any, what, op string, call func(host, []byte) int32) error {
	b, err := marshal(v)
	if err != nil {
		return fmt.Errorf("wasmguest: encoding %s: %w", what, err)
	}
	if err := ready(); err != nil {
		return err
	}
	if st := call(abi, b); st != 0 {
		return &ABIError{Op: op, Code: st}
	}
	return nil
}

// Log formats its arguments as fmt.Sprintf does and writes them as one
// log entry. Outside a guest it does nothing.
func Log(format string, args ...any) {
	if ready() != nil {
		return
	}
	abi.log([]byte(fmt.Sprintf(format, args...)))
}
