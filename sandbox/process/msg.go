package process

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sandcall/sandcall/sandbox"
)

// encodeJob encodes a job frame's body: the length of the job's JSON
// (uint32, big-endian), the JSON without the WebAssembly module, then the
// module's bytes as they are. Inside the JSON the module would go as
// base64: a third larger, and 12 ms to encode and 45 ms to decode for the
// 3.4 MB Go guest of the expense program, on every run (a loaded 2-core
// VM); raw, it is one copy each way.
func encodeJob(job *sandbox.Job) ([]byte, error) {
	j := *job
	mod := j.Program.Module
	j.Program.Module = nil
	js, err := json.Marshal(&j)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 4, 4+len(js)+len(mod))
	binary.BigEndian.PutUint32(body, uint32(len(js)))
	body = append(append(body, js...), mod...)
	return body, nil
}

// decodeJob decodes a job frame's body (encodeJob). The job's module
// shares body's bytes.
func decodeJob(body []byte) (*sandbox.Job, error) {
	if len(body) < 4 {
		return nil, errors.New("job frame too short")
	}
	n := binary.BigEndian.Uint32(body)
	if uint64(n) > uint64(len(body)-4) {
		return nil, errors.New("job frame: JSON length past the frame")
	}
	var job sandbox.Job
	if err := json.Unmarshal(body[4:4+n], &job); err != nil {
		return nil, err
	}
	if mod := body[4+n:]; len(mod) > 0 {
		job.Program.Module = mod
	}
	return &job, nil
}

type readyMsg struct {
	PID int `json:"pid"`
}

type callMsg struct {
	ID   uint64          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

type resultMsg struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Err    *sandbox.Error  `json:"err,omitempty"`
}

// holdMsg tells the worker that the job's wall clock is held (a tool call
// waits for a person's approval) or runs again; see sandbox.Wall.
type holdMsg struct {
	Held bool `json:"held"`
}

type logMsg struct {
	Entry string `json:"entry"`
}

type partialMsg struct {
	Value json.RawMessage `json:"value"`
}

type outcomeMsg struct {
	Value         json.RawMessage `json:"value,omitempty"`
	Logs          []string        `json:"logs,omitempty"`
	LogsTruncated bool            `json:"logs_truncated,omitempty"`
	Partial       json.RawMessage `json:"partial,omitempty"`
	Err           *sandbox.Error  `json:"err,omitempty"`
}

// decodeWorkerMessage decodes and checks a frame sent by a worker. Anything
// unexpected is an error, and the supervisor then kills the worker: a worker
// runs untrusted code, so its messages are untrusted input.
func decodeWorkerMessage(kind byte, body []byte) (any, error) {
	switch kind {
	case kindReady:
		var m readyMsg
		return m, strictUnmarshal(body, &m)
	case kindCall:
		return decodeCall(body)
	case kindLog:
		var m logMsg
		return m, strictUnmarshal(body, &m)
	case kindPartial:
		var m partialMsg
		if err := strictUnmarshal(body, &m); err != nil {
			return nil, err
		}
		if len(m.Value) == 0 {
			return nil, errors.New("partial frame without a value")
		}
		return m, nil
	case kindOutcome:
		var m outcomeMsg
		if err := strictUnmarshal(body, &m); err != nil {
			return nil, err
		}
		if m.Err != nil && !m.Err.Code.Valid() {
			return nil, fmt.Errorf("outcome with unknown error code %q", sandbox.Cap(string(m.Err.Code), 32))
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown frame kind %#x", kind)
}

// strictUnmarshal decodes body into v. json.Unmarshal checks that the
// whole body is well-formed before it decodes anything (a json.Valid first
// would scan an outcome's result a third time).
func strictUnmarshal(body []byte, v any) error {
	return json.Unmarshal(body, v)
}
