package wasmguest

import "encoding/json"

// The host's state calls (sandbox.StateGet and friends): values a program
// keeps between runs, per principal, with a time to live. Plain calls
// through the ABI's call function: no import of their own.
const (
	stateGet    = "$state.get"
	stateSet    = "$state.set"
	stateDelete = "$state.delete"
	stateKeys   = "$state.keys"
)

// StateGet reads the value kept under key into out (which may be nil) and
// reports whether the key is set; a key set to null reads as unset.
// Reading a value joins the label of the run that wrote it into this run
// (docs/guest-api.md).
func StateGet(key string, out any) (bool, error) {
	a, err := marshalArgs(stateGet, map[string]string{"key": key})
	if err != nil {
		return false, err
	}
	res, err := RawCall(stateGet, a)
	if err != nil {
		return false, err
	}
	if string(res) == "null" {
		return false, nil
	}
	return true, unmarshal(stateGet, res, out)
}

// StateSet keeps value (marshalled with encoding/json) under key for
// ttlSeconds, or the server's default time to live if ttlSeconds is 0. A
// value over the server's quota fails with a *ToolError (E_TOOL_ARGS).
func StateSet(key string, value any, ttlSeconds int) error {
	v, err := marshal(value)
	if err != nil {
		return err
	}
	args := map[string]any{"key": key, "value": json.RawMessage(v)}
	if ttlSeconds > 0 {
		args["ttl_s"] = ttlSeconds
	}
	return Call(stateSet, args, nil)
}

// StateDelete removes key and reports whether it was set.
func StateDelete(key string) (bool, error) {
	var found bool
	err := Call(stateDelete, map[string]string{"key": key}, &found)
	return found, err
}

// StateKeys returns the keys that start with prefix, sorted.
func StateKeys(prefix string) ([]string, error) {
	var keys []string
	err := Call(stateKeys, map[string]string{"prefix": prefix}, &keys)
	return keys, err
}
