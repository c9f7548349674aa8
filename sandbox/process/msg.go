package process

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sandcall/sandcall/sandbox"
)

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
