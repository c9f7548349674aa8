package wasmguest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// fakeHost is the sandcall host module in Go, with the ABI's semantics:
// handles, payloads freed by result_read, a cap on live handles, and
// negative codes where the real host returns them.
type fakeHost struct {
	ver        int32
	tools      map[string]func(args string) (result string, toolErr string)
	maxHandles int
	next       int32
	live       map[int32]*fakeCall
	input      []byte
	result     []byte
	logs       []string
	calls      []string // "name args", in order of start
	callCode   int32    // if non-zero, call and call_async return it
	readCode   int32    // if non-zero, result_read returns it
	setCode    int32    // set_result returns it
	partial    []byte   // the last value progress stored
	maxPartial int      // progress refuses a longer value with -6 (0: no cap)
	versionN   int      // abi_version calls
}

type fakeCall struct {
	status  int32
	payload []byte
}

func newFake() *fakeHost {
	return &fakeHost{ver: ABIVersion, maxHandles: 1 << 30, live: map[int32]*fakeCall{},
		tools: map[string]func(string) (string, string){
			"echo": func(a string) (string, string) { return a, "" },
			"ping": func(a string) (string, string) {
				var in struct{ N int }
				if err := json.Unmarshal([]byte(a), &in); err != nil {
					return "", `{"code":"E_TOOL_ARGS","message":"bad args"}`
				}
				return fmt.Sprint(in.N + 1), ""
			},
			"deny": func(string) (string, string) {
				return "", `{"code":"E_TOOL_DENIED","message":"no Q4","hint":"Ask for Q1, Q2 or Q3.","rule":"closed-quarters","tool":"deny"}`
			},
		}}
}

// use installs f as the host for the rest of the test.
func use(t *testing.T, f *fakeHost) *fakeHost {
	t.Helper()
	prev, prevChecked := abi, checked
	if f == nil {
		abi = nil
	} else {
		abi = f
	}
	checked = new(versionCheck)
	t.Cleanup(func() { abi, checked = prev, prevChecked })
	return f
}

func (f *fakeHost) version() int32 { f.versionN++; return f.ver }

func (f *fakeHost) start(name string, args []byte) int32 {
	if f.callCode != 0 {
		return f.callCode
	}
	if len(f.live) >= f.maxHandles {
		return ABITooManyHandles
	}
	f.calls = append(f.calls, name+" "+string(args))
	c := &fakeCall{}
	tool, ok := f.tools[name]
	if !ok {
		c.status, c.payload = 1, []byte(`{"code":"E_TOOL_UNKNOWN","message":"no tool `+name+`"}`)
	} else if res, terr := tool(string(args)); terr != "" {
		c.status, c.payload = 1, []byte(terr)
	} else {
		c.payload = []byte(res)
	}
	f.next++
	f.live[f.next] = c
	return f.next
}

func (f *fakeHost) call(name string, args []byte) int32      { return f.start(name, args) }
func (f *fakeHost) callAsync(name string, args []byte) int32 { return f.start(name, args) }

func (f *fakeHost) wait(h int32) int32 {
	c, ok := f.live[h]
	if !ok {
		return ABIUnknownHandle
	}
	return c.status
}

func (f *fakeHost) resultLen(h int32) int32 {
	c, ok := f.live[h]
	if !ok {
		return ABIUnknownHandle
	}
	return int32(len(c.payload))
}

func (f *fakeHost) resultRead(h int32, buf []byte) int32 {
	if f.readCode != 0 {
		return f.readCode
	}
	c, ok := f.live[h]
	if !ok {
		return ABIUnknownHandle
	}
	if len(buf) < len(c.payload) {
		return ABIBufferTooSmall
	}
	delete(f.live, h)
	return int32(copy(buf, c.payload))
}

func (f *fakeHost) inputLen() int32 { return int32(len(f.input)) }

func (f *fakeHost) inputRead(buf []byte) int32 {
	if len(buf) < len(f.input) {
		return ABIBufferTooSmall
	}
	return int32(copy(buf, f.input))
}

func (f *fakeHost) setResult(b []byte) int32 {
	if f.setCode != 0 {
		return f.setCode
	}
	f.result = append([]byte(nil), b...)
	return 0
}

func (f *fakeHost) log(b []byte) { f.logs = append(f.logs, string(b)) }

func (f *fakeHost) progress(b []byte) int32 {
	if !json.Valid(b) || f.maxPartial > 0 && len(b) > f.maxPartial {
		return -6
	}
	f.partial = append([]byte(nil), b...)
	return 0
}

func TestProgress(t *testing.T) {
	f := use(t, newFake())
	f.maxPartial = 64
	if err := Progress(map[string]int{"done": 3}); err != nil || string(f.partial) != `{"done":3}` {
		t.Fatalf("Progress = %v, stored %s", err, f.partial)
	}
	if err := Progress(map[string]int{"done": 4}); err != nil || string(f.partial) != `{"done":4}` {
		t.Fatalf("second Progress = %v, stored %s (the last one wins)", err, f.partial)
	}
	err := Progress(strings.Repeat("x", 100))
	var ae *ABIError
	if !errors.As(err, &ae) || ae.Op != "progress" || ae.Code != -6 || string(f.partial) != `{"done":4}` {
		t.Fatalf("over budget: %v, stored %s; want ABIError -6 and the old value kept", err, f.partial)
	}
	if err := Progress(func() {}); err == nil || !strings.Contains(err.Error(), "encoding the progress value") {
		t.Fatalf("unencodable value: %v", err)
	}
	use(t, nil)
	if err := Progress(1); err != ErrNotGuest {
		t.Fatalf("outside a guest: %v", err)
	}
}

func TestNotGuest(t *testing.T) {
	use(t, nil)
	var v any
	if err := Call("ping", nil, &v); err != ErrNotGuest {
		t.Errorf("Call: %v", err)
	}
	if _, err := RawCall("ping", nil); err != ErrNotGuest {
		t.Errorf("RawCall: %v", err)
	}
	if _, err := Start("ping", nil); err != ErrNotGuest {
		t.Errorf("Start: %v", err)
	}
	if err := Input(&v); err != ErrNotGuest {
		t.Errorf("Input: %v", err)
	}
	if err := Return(1); err != ErrNotGuest {
		t.Errorf("Return: %v", err)
	}
	for _, err := range CallAll([]Request{{Name: "a"}, {Name: "b"}}, nil) {
		if err != ErrNotGuest {
			t.Errorf("CallAll: %v", err)
		}
	}
	Log("nothing happens %d", 1)
}

func TestCall(t *testing.T) {
	f := use(t, newFake())
	var n int
	if err := Call("ping", map[string]int{"n": 41}, &n); err != nil || n != 42 {
		t.Fatalf("ping = %d, %v", n, err)
	}
	if err := Call("ping", map[string]int{"n": 1}, nil); err != nil {
		t.Fatalf("out nil: %v", err)
	}
	// nil args send {}; strings go unescaped, as JSON.stringify sends them.
	var echoed map[string]string
	if err := Call("echo", nil, &echoed); err != nil || len(echoed) != 0 {
		t.Fatalf("echo(nil) = %v, %v", echoed, err)
	}
	if err := Call("echo", map[string]string{"q": "<a&b>"}, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{`ping {"n":41}`, `ping {"n":1}`, `echo {}`, `echo {"q":"<a&b>"}`}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls = %q, want %q", f.calls, want)
	}
	if f.versionN != 1 {
		t.Errorf("abi_version called %d times, want once", f.versionN)
	}
	if len(f.live) != 0 {
		t.Errorf("%d handles left live", len(f.live))
	}
	res, err := RawCall("echo", []byte(`{"x":[1,2]}`))
	if err != nil || string(res) != `{"x":[1,2]}` {
		t.Errorf("RawCall = %s, %v", res, err)
	}
	// A result that does not fit out says which tool.
	if err := Call("echo", map[string]string{"x": "y"}, &n); err == nil || !strings.Contains(err.Error(), "result of echo") {
		t.Errorf("mismatched out: %v", err)
	}
	// Arguments that cannot be encoded never reach the host.
	if err := Call("echo", map[string]any{"f": func() {}}, nil); err == nil || !strings.Contains(err.Error(), "arguments of echo") {
		t.Errorf("bad args: %v", err)
	}
}

func TestToolError(t *testing.T) {
	f := use(t, newFake())
	f.tools["args"] = func(string) (string, string) {
		return "", `{"code":"E_TOOL_ARGS","message":"argument \"level\": \"L6\" is not one of the allowed values",` +
			`"hint":"Use one of L1..L5.","retryable":false,"allowed_values":["L1","L2"],"path":"/level"}`
	}
	err := Call("args", map[string]string{"level": "L6"}, nil)
	var te *ToolError
	if !errors.As(err, &te) {
		t.Fatalf("err = %T %v, want *ToolError", err, err)
	}
	want := &ToolError{Code: "E_TOOL_ARGS", Message: `argument "level": "L6" is not one of the allowed values`,
		Hint: "Use one of L1..L5.", AllowedValues: []any{"L1", "L2"}, Path: "/level", Tool: "args"}
	if !reflect.DeepEqual(te, want) {
		t.Errorf("got %+v\nwant %+v", te, want)
	}
	if !errors.Is(err, ErrToolArgs) || errors.Is(err, ErrToolDenied) {
		t.Errorf("errors.Is: args %v, denied %v", errors.Is(err, ErrToolArgs), errors.Is(err, ErrToolDenied))
	}
	if got := err.Error(); got != `E_TOOL_ARGS: argument "level": "L6" is not one of the allowed values` {
		t.Errorf("Error() = %q", got)
	}

	err = Call("deny", nil, nil)
	if !errors.As(err, &te) || te.Rule != "closed-quarters" || te.Hint != "Ask for Q1, Q2 or Q3." || !errors.Is(err, ErrToolDenied) {
		t.Errorf("deny: %+v", err)
	}
	if err := Call("nope", nil, nil); !errors.Is(err, ErrToolUnknown) || !errors.As(err, &te) || te.Tool != "nope" {
		t.Errorf("unknown tool: %v", err)
	}

	// A malformed error payload is still a *ToolError, of kind E_TOOL_FAILED.
	for _, payload := range []string{`not json`, `{}`, `{"code":""}`, ``} {
		f.tools["bad"] = func(p string) func(string) (string, string) {
			return func(string) (string, string) { return "", p }
		}(payload)
		if payload == "" {
			// An empty error payload: the fake marks status 1 only for a
			// non-empty error, so build the call by hand.
			f.live[100] = &fakeCall{status: 1}
			_, err = collect("bad", 100)
		} else {
			err = Call("bad", nil, nil)
		}
		if !errors.Is(err, ErrToolFailed) || !errors.As(err, &te) || te.Tool != "bad" {
			t.Errorf("payload %q: %v", payload, err)
		}
	}
}

func TestABIErrors(t *testing.T) {
	f := use(t, newFake())
	f.callCode = ABIBadArgument
	err := Call("ping", nil, nil)
	var ae *ABIError
	if !errors.As(err, &ae) || ae.Op != "call" || ae.Code != ABIBadArgument {
		t.Errorf("call: %v", err)
	}
	if !errors.Is(err, &ABIError{Code: ABIBadArgument}) || errors.Is(err, &ABIError{Code: ABIAfterEnd}) {
		t.Errorf("errors.Is on %v", err)
	}
	if got := err.Error(); got != "wasmguest: call returned -1 (bad argument)" {
		t.Errorf("Error() = %q", got)
	}
	if _, err := Start("ping", nil); !errors.As(err, &ae) || ae.Op != "call_async" {
		t.Errorf("call_async: %v", err)
	}
	f.callCode = 0 // a handle of 0 is not in the ABI either
	if err := (&ABIError{Op: "call", Code: 0}).Error(); !strings.Contains(err, "not defined") {
		t.Errorf("Error() = %q", err)
	}

	f.readCode = ABIBufferTooSmall
	if err := Call("ping", map[string]int{"n": 1}, nil); !errors.Is(err, &ABIError{Code: ABIBufferTooSmall}) {
		t.Errorf("result_read: %v", err)
	}
	f.readCode = 0

	if _, err := collect("ping", 9999); !errors.As(err, &ae) || ae.Op != "wait" || ae.Code != ABIUnknownHandle {
		t.Errorf("unknown handle: %v", err)
	}
	f.setCode = ABIAfterEnd
	if err := Return(1); !errors.Is(err, &ABIError{Code: ABIAfterEnd}) {
		t.Errorf("set_result: %v", err)
	}

	// A host of another ABI version: every call fails, and says why.
	g := use(t, newFake())
	g.ver = 2
	if err := Call("ping", nil, nil); err == nil || !strings.Contains(err.Error(), "ABI version 2") {
		t.Errorf("version 2: %v", err)
	}
	if len(g.calls) != 0 {
		t.Errorf("calls reached a host of another version: %q", g.calls)
	}
}

func TestStartWait(t *testing.T) {
	f := use(t, newFake())
	a, err := Start("ping", map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start("ping", map[string]int{"n": 2})
	if err != nil {
		t.Fatal(err)
	}
	var x, y int
	if err := b.Wait(&y); err != nil || y != 3 {
		t.Errorf("b = %d, %v", y, err)
	}
	if err := a.Wait(&x); err != nil || x != 2 {
		t.Errorf("a = %d, %v", x, err)
	}
	if err := a.Wait(&x); !errors.Is(err, &ABIError{Code: ABIUnknownHandle}) {
		t.Errorf("second Wait: %v", err)
	}
	d, err := Start("deny", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(nil); !errors.Is(err, ErrToolDenied) {
		t.Errorf("deny: %v", err)
	}
	if len(f.live) != 0 {
		t.Errorf("%d handles left live", len(f.live))
	}
}

func TestCallAll(t *testing.T) {
	for _, maxHandles := range []int{1, 3, 16, 1 << 30} {
		t.Run(fmt.Sprint(maxHandles), func(t *testing.T) {
			f := use(t, newFake())
			f.maxHandles = maxHandles
			const n = 50
			calls := make([]Request, n)
			outs := make([]any, n)
			got := make([]int, n)
			for i := range calls {
				calls[i] = Request{Name: "ping", Args: map[string]int{"n": i}}
				outs[i] = &got[i]
			}
			calls[7] = Request{Name: "deny"}
			calls[8] = Request{Name: "ping", Args: map[string]string{"n": "x"}}
			outs[9] = nil
			errs := CallAll(calls, outs)
			if len(errs) != n {
				t.Fatalf("%d errs", len(errs))
			}
			for i, err := range errs {
				switch i {
				case 7:
					if !errors.Is(err, ErrToolDenied) {
						t.Errorf("errs[7] = %v", err)
					}
				case 8:
					if !errors.Is(err, ErrToolArgs) {
						t.Errorf("errs[8] = %v", err)
					}
				case 9:
					if err != nil || got[9] != 0 {
						t.Errorf("errs[9] = %v, got %d", err, got[9])
					}
				default:
					if err != nil || got[i] != i+1 {
						t.Errorf("call %d = %d, %v", i, got[i], err)
					}
				}
			}
			if len(f.calls) != n || len(f.live) != 0 {
				t.Errorf("%d calls, %d live handles", len(f.calls), len(f.live))
			}
		})
	}
	f := use(t, newFake())
	if errs := CallAll([]Request{{Name: "ping"}, {Name: "ping"}}, []any{nil}); errs[0] == nil || errs[1] == nil || len(f.calls) != 0 {
		t.Errorf("mismatched outs: %v, %d calls", errs, len(f.calls))
	}
	if errs := CallAll([]Request{{Name: "echo"}}, nil); errs[0] != nil {
		t.Errorf("outs nil: %v", errs)
	}
	if errs := CallAll(nil, nil); len(errs) != 0 {
		t.Errorf("no calls: %v", errs)
	}
	// Calls that cannot start report their own error; the rest run.
	f.callCode = ABIAfterEnd
	for _, err := range CallAll([]Request{{Name: "ping"}, {Name: "ping"}}, nil) {
		if !errors.Is(err, &ABIError{Code: ABIAfterEnd}) {
			t.Errorf("after end: %v", err)
		}
	}
}

func TestMap(t *testing.T) {
	f := use(t, newFake())
	f.maxHandles = 4
	args := make([]map[string]int, 20)
	for i := range args {
		args[i] = map[string]int{"n": i * 10}
	}
	got, err := Map[int]("ping", args)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != i*10+1 {
			t.Errorf("got[%d] = %d", i, v)
		}
	}
	// Raw results are the host's bytes, unscanned (the fake host sends
	// them as its tools write them, spaces included).
	f.tools["raw"] = func(a string) (string, string) { return `[ 1,  "x" ]`, "" }
	raws, err := Map[json.RawMessage]("raw", args[:3])
	if err != nil || len(raws) != 3 || string(raws[2]) != `[ 1,  "x" ]` {
		t.Errorf("Map[json.RawMessage] = %q, %v", raws, err)
	}
	args[3] = map[string]int{"m": 1}
	f.tools["ping"] = func(a string) (string, string) {
		if strings.Contains(a, `"m"`) {
			return "", `{"code":"E_TOOL_ARGS","message":"unexpected m"}`
		}
		return "7", ""
	}
	got, err = Map[int]("ping", args)
	if !errors.Is(err, ErrToolArgs) || len(got) != 20 || got[19] != 7 || got[3] != 0 {
		t.Errorf("Map with a failure = %v, %v", got, err)
	}
	if got, err := Map[int]("ping", []int(nil)); err != nil || len(got) != 0 {
		t.Errorf("no args: %v, %v", got, err)
	}
}

func TestInput(t *testing.T) {
	f := use(t, newFake())
	// Without input the host gives null (an empty input is read the same):
	// v keeps its defaults.
	for _, input := range []string{"null", ""} {
		f.input = []byte(input)
		v := map[string]any{"kept": true}
		if err := Input(&v); err != nil || !reflect.DeepEqual(v, map[string]any{"kept": true}) {
			t.Errorf("input %q: %v, %v", input, v, err)
		}
		if raw, err := RawInput(); err != nil || string(raw) != "null" {
			t.Errorf("RawInput with input %q = %q, %v", input, raw, err)
		}
	}
	f.input = []byte(`{"department":"engineering","n":3}`)
	var in struct {
		Department string
		N          int
	}
	if err := Input(&in); err != nil || in.Department != "engineering" || in.N != 3 {
		t.Errorf("input: %+v, %v", in, err)
	}
	raw, err := RawInput()
	if err != nil || string(raw) != string(f.input) {
		t.Errorf("RawInput = %s, %v", raw, err)
	}
	f.input = []byte(`[1,2]`)
	if err := Input(&in); err == nil || !strings.Contains(err.Error(), "decoding the input") {
		t.Errorf("mismatched input: %v", err)
	}
}

func TestReturn(t *testing.T) {
	f := use(t, newFake())
	type row struct {
		ID     string  `json:"id"`
		Total  float64 `json:"travel_total"`
		Limit  int     `json:"travel_limit"`
		OverBy float64 `json:"over_by"`
	}
	if err := Return([]row{{ID: "<ENG-001&>", Total: 4801.26, Limit: 2500, OverBy: 2301.26}, {ID: "x", Total: 1e21, OverBy: 1e-7}}); err != nil {
		t.Fatal(err)
	}
	// Key order as declared, no HTML escaping, numbers as JavaScript prints them.
	want := `[{"id":"<ENG-001&>","travel_total":4801.26,"travel_limit":2500,"over_by":2301.26},` +
		`{"id":"x","travel_total":1e+21,"travel_limit":0,"over_by":1e-7}]`
	if string(f.result) != want {
		t.Errorf("result\n%s\nwant\n%s", f.result, want)
	}
	if err := Return(nil); err != nil || string(f.result) != "null" {
		t.Errorf("Return(nil) = %s, %v", f.result, err)
	}
	if err := Return(json.RawMessage(`{ "a" : 1 }`)); err != nil || string(f.result) != `{"a":1}` {
		t.Errorf("RawMessage = %s, %v", f.result, err)
	}
	if err := Return(map[string]any{"f": func() {}}); err == nil || !strings.Contains(err.Error(), "encoding the result") {
		t.Errorf("unencodable result: %v", err)
	}
}

func TestLog(t *testing.T) {
	f := use(t, newFake())
	Log("%d calls, %s", 56, "ok")
	Log("100%% literal")
	if want := []string{"56 calls, ok", "100% literal"}; !reflect.DeepEqual(f.logs, want) {
		t.Errorf("logs = %q, want %q", f.logs, want)
	}
}
