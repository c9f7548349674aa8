package sandbox

import (
	"context"
	"encoding/json"
	"time"
)

// Language names the language of a Program.
type Language string

// The languages a Program may be written in.
const (
	JavaScript Language = "javascript"
	TypeScript Language = "typescript"
	WASM       Language = "wasm"
)

// Program is one submitted program.
type Program struct {
	// Language defaults to JavaScript when empty.
	Language Language
	// Source is the program text (JavaScript or TypeScript). For JavaScript it is
	// the body of an async function: top-level await works and return gives the
	// result.
	Source string
	// Module is a WebAssembly module (Language WASM).
	Module []byte
	// Input is the JSON value the program sees as `input`. If empty, input is null.
	Input json.RawMessage
}

// Limits bounds one run. A zero field means "the default" (see DefaultLimits);
// use Limits.Resolve to fill them in and Limits.Within to apply an operator's
// ceiling.
type Limits struct {
	Timeout        time.Duration // wall time; default 10 s
	MemoryBytes    int64         // guest memory; default 256 MiB
	MaxCalls       int           // tool calls per run; default 1,000
	MaxInFlight    int           // tool calls in flight per run; default 16
	MaxResultBytes int           // compact JSON of the result; default 256 KiB
	MaxLogBytes    int           // all console output; default 64 KiB
	MaxSourceBytes int           // program source; default 256 KiB
	MaxModuleBytes int           // WebAssembly module; default 16 MiB
	MaxStackFrames int           // JS call stack depth; default 2,000
}

// DefaultLimits returns the defaults docs/limits.md states.
func DefaultLimits() Limits {
	return Limits{
		Timeout:        10 * time.Second,
		MemoryBytes:    256 << 20,
		MaxCalls:       1000,
		MaxInFlight:    16,
		MaxResultBytes: 256 << 10,
		MaxLogBytes:    64 << 10,
		MaxSourceBytes: 256 << 10,
		MaxModuleBytes: 16 << 20,
		MaxStackFrames: 2000,
	}
}

// MaxTimeout is the largest wall time an operator may configure.
const MaxTimeout = 60 * time.Second

// Resolve returns l with every zero field set to its default.
func (l Limits) Resolve() Limits {
	d := DefaultLimits()
	pick := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	l.MaxCalls = pick(l.MaxCalls, d.MaxCalls)
	l.MaxInFlight = pick(l.MaxInFlight, d.MaxInFlight)
	l.MaxResultBytes = pick(l.MaxResultBytes, d.MaxResultBytes)
	l.MaxLogBytes = pick(l.MaxLogBytes, d.MaxLogBytes)
	l.MaxSourceBytes = pick(l.MaxSourceBytes, d.MaxSourceBytes)
	l.MaxModuleBytes = pick(l.MaxModuleBytes, d.MaxModuleBytes)
	l.MaxStackFrames = pick(l.MaxStackFrames, d.MaxStackFrames)
	return l
}

// Within returns l (resolved) lowered field by field to ceiling (resolved):
// a request can lower a limit, never raise it past what the operator set.
func (l Limits) Within(ceiling Limits) Limits {
	l, c := l.Resolve(), ceiling.Resolve()
	if l.Timeout > c.Timeout {
		l.Timeout = c.Timeout
	}
	if l.MemoryBytes > c.MemoryBytes {
		l.MemoryBytes = c.MemoryBytes
	}
	low := func(v *int, c int) {
		if *v > c {
			*v = c
		}
	}
	low(&l.MaxCalls, c.MaxCalls)
	low(&l.MaxInFlight, c.MaxInFlight)
	low(&l.MaxResultBytes, c.MaxResultBytes)
	low(&l.MaxLogBytes, c.MaxLogBytes)
	low(&l.MaxSourceBytes, c.MaxSourceBytes)
	low(&l.MaxModuleBytes, c.MaxModuleBytes)
	low(&l.MaxStackFrames, c.MaxStackFrames)
	return l
}

// Job is one program to execute with its limits and bindings.
type Job struct {
	RunID   string
	Program Program
	// Limits must be resolved (see Limits.Resolve).
	Limits Limits
	// Tools are the names bound as tools.<name> in the guest. If empty, no
	// tools are bound; tools.call(name, args) still reaches the host, which
	// decides.
	Tools []string
	// KeepResultBytes, when larger than Limits.MaxResultBytes, lets a result
	// of up to KeepResultBytes of compact JSON come back whole in
	// Outcome.Value, for the caller to cut and page (see Result.OutputRef);
	// only a larger one fails with E_OUTPUT_LIMIT. If zero (or not larger),
	// a result over Limits.MaxResultBytes fails with E_OUTPUT_LIMIT. It
	// never exceeds MaxKeptResultBytes.
	KeepResultBytes int
	// Principal names who submitted the job. An executor that keeps state
	// between jobs (the process tier's reused workers) keeps it per
	// principal: a worker that ran one principal's job never runs
	// another's. It does not cross to a worker.
	Principal string `json:"-"`
	// Seed and Clock make a JavaScript run replayable: Math.random is a
	// generator seeded with Seed, and Date (new Date(), Date.now()) reads
	// Clock, the same instant for the whole run. The host picks them per
	// run and keeps them to resume the run by replay (an approval on MCP
	// 2026-07-28): the replay then takes the same path. With a zero Clock
	// Date reads the real time; a zero Seed is a random one. A WebAssembly
	// run reads them through WASI: random_get from Seed, the realtime clock
	// frozen at Clock and a monotonic clock that advances per reading (a
	// zero Seed or Clock keeps wazero's fixed defaults).
	Seed  uint64    `json:",omitempty"`
	Clock time.Time `json:",omitzero"`
	// SendPlan makes a JavaScript or TypeScript engine hand the host the
	// program's plan (PlanCall) before it runs it, and return the host's
	// refusal, if any, without running it. The host sets it when it wants
	// the plan (docs/programs.md); a WebAssembly engine ignores it (the
	// host reads a module's plan itself).
	SendPlan bool `json:",omitempty"`
}

// MaxKeptResultBytes is the largest result an engine hands back whole
// (Job.KeepResultBytes): a result over its budget but within this is cut
// for the model and kept for paging; anything larger is E_OUTPUT_LIMIT.
const MaxKeptResultBytes = 8 << 20

// MaxKeptLogBytes is the most console output a runner keeps for paging
// when the logs are over their budget.
const MaxKeptLogBytes = 1 << 20

// ResultCap is the largest compact JSON result an engine accepts for job:
// Limits.MaxResultBytes, or KeepResultBytes (at most MaxKeptResultBytes)
// when that is larger.
func (j *Job) ResultCap() int {
	c := j.Limits.Resolve().MaxResultBytes
	if k := min(j.KeepResultBytes, MaxKeptResultBytes); k > c {
		c = k
	}
	return c
}

// Host is the guest's only way out of the sandbox. An engine calls it for
// every tool call the program makes. Call may be invoked from several
// goroutines at once (calls in Promise.all run in parallel).
//
// args is the compact JSON of the arguments; the result is compact JSON. A
// failed call returns an *Error, which the engine hands to the guest as a
// ToolError.
type Host interface {
	Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)
}

// AsyncHost is a Host that can also start a call without a goroutine of
// the caller's waiting for it: StartCall starts the call and returns;
// done is then called exactly once, from another goroutine, with the
// call's result, or with a cancellation error as soon as ctx ends first.
// StartCall may hold the call back until Flush, which the caller must
// call before it waits for any answer: a guest's calls started in one
// turn of its event loop then leave together. An engine uses it, when its
// host has it, for the guest's calls: the process tier's worker sends a
// turn's calls in one write and hands a result from its frame reader
// straight to the engine.
type AsyncHost interface {
	Host
	StartCall(ctx context.Context, tool string, args json.RawMessage, done func(json.RawMessage, error))
	Flush()
}

// Outcome is what an engine reports for one Job.
type Outcome struct {
	// Value is the compact JSON of the program's result ("null" for undefined),
	// with property order as the program built it. Nil when Err is set.
	Value json.RawMessage
	// Logs holds captured console output, one entry per call.
	Logs []string
	// LogsTruncated is true when console output went past its budget.
	LogsTruncated bool
	// Partial is the compact JSON of the last value the program stored with
	// progress(value) (nil if it stored none), whether or not the run
	// succeeded.
	Partial json.RawMessage
	// Err is nil on success.
	Err *Error
}

// Executor runs Jobs. The in-process engines and the process pool implement it.
type Executor interface {
	Execute(ctx context.Context, job *Job, host Host) *Outcome
}

// CallStats counts the tool calls of one run. Total, OK, Failed, Denied and
// ByTool count logical calls: a call the broker retried counts once, by its
// final outcome.
type CallStats struct {
	Total  int            `json:"total"`
	OK     int            `json:"ok"`
	Failed int            `json:"failed"`
	Denied int            `json:"denied"`
	ByTool map[string]int `json:"by_tool"`
	// Retries counts the extra attempts the broker made after transient
	// failures of idempotent tools (zero when no call was retried).
	Retries int `json:"retries"`
	// Truncated counts the calls whose output was over its budget and was
	// cut by whole items (the run's logs name each one).
	Truncated int `json:"truncated"`
}

// Result is the structured output of run_code (docs/mcp.md) and of
// `sandcall run --json`.
type Result struct {
	OK         bool            `json:"ok"`
	Result     json.RawMessage `json:"result"`
	Logs       []string        `json:"logs"`
	Calls      CallStats       `json:"calls"`
	Truncated  bool            `json:"truncated"`
	DurationMS float64         `json:"duration_ms"`
	RunID      string          `json:"run_id"`
	// Tier names the isolation the program ran under, e.g. "inprocess" or
	// "process+rlimits+userns+netns+seccomp" (see `sandcall doctor`).
	Tier  string `json:"tier,omitempty"`
	Error *Error `json:"error,omitempty"`
	// Partial is the last value the program stored with progress(value),
	// reported when the run failed (E_TIMEOUT, E_CANCELLED, ...) so that the
	// work done is not lost. Omitted on success and when none was stored.
	Partial json.RawMessage `json:"partial,omitempty"`
	// OutputRef is set when the result was over its budget (Truncated is
	// then true): Result holds the first page of the result's compact JSON
	// as a string, and read_output(OutputRef, offset) returns the rest.
	OutputRef string `json:"output_ref,omitempty"`
	// OutputBytes is the size of the whole result's compact JSON when it was
	// cut, and OutputNextOffset the byte offset where the page in Result
	// ends (where read_output should go on).
	OutputBytes      int `json:"output_bytes,omitempty"`
	OutputNextOffset int `json:"output_next_offset,omitempty"`
	// Whole is the whole compact JSON of a result that was cut, for the
	// server to keep under OutputRef. It is never serialized.
	Whole json.RawMessage `json:"-"`
	// LogsRef is set when the logs were over their budget (Truncated is then
	// true): Logs holds the entries that fit, the last one possibly cut, and
	// read_output(LogsRef, offset) returns the whole console output (up to
	// MaxKeptLogBytes) as text, one entry per line. LogsBytes is that
	// text's size, LogsNextOffset the byte offset where what Logs shows
	// ends.
	LogsRef        string `json:"logs_ref,omitempty"`
	LogsBytes      int    `json:"logs_bytes,omitempty"`
	LogsNextOffset int    `json:"logs_next_offset,omitempty"`
	// WholeLogs is that text, for the server to keep under LogsRef. It is
	// never serialized.
	WholeLogs []byte `json:"-"`
	// Plan is what the program named before it ran (sandbox/plan): the
	// tools, with the line of each, and the count of names computed at run
	// time. Omitted when it could not be read (a program that does not
	// parse).
	Plan *Plan `json:"plan,omitempty"`
	// Meta is what the server puts in the MCP result's _meta: the run's
	// information-flow label (see bindings.LabelMeta), which read_output
	// pages of the result keep. It is never serialized here.
	Meta map[string]any `json:"-"`
}

// LogSink is implemented by hosts that want console output as it happens.
// Engines call Log for every entry they keep in Outcome.Logs, in order, from
// the guest's goroutine. The process tier streams entries to the server this
// way, so a worker that dies still leaves its logs.
type LogSink interface {
	Log(entry string)
}

// PartialSink is implemented by hosts that want the values a program stores
// with progress(value) as they are stored. Engines call Partial with the
// compact JSON of each value (at most the result budget), from the guest's
// goroutine; the last one wins. The process tier streams them to the server
// this way, so a worker killed at its deadline still leaves its partial
// result; it coalesces them (at most one every 100 ms, the latest), so the
// host there may not see every value, but always sees the last one.
type PartialSink interface {
	Partial(value json.RawMessage)
}
