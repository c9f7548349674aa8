package wasmguest

import (
	"slices"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

// TestStateNames: the helpers call the host's own names.
func TestStateNames(t *testing.T) {
	if stateGet != sandbox.StateGet || stateSet != sandbox.StateSet || stateDelete != sandbox.StateDelete || stateKeys != sandbox.StateKeys {
		t.Fatal("the state call names differ from package sandbox's")
	}
}

func TestState(t *testing.T) {
	f := use(t, newFake())
	kept := map[string]string{}
	f.tools[stateSet] = func(a string) (string, string) { kept["last"] = a; return "null", "" }
	f.tools[stateGet] = func(a string) (string, string) {
		if a == `{"key":"missing"}` {
			return "null", ""
		}
		return `{"n":2}`, ""
	}
	f.tools[stateDelete] = func(string) (string, string) { return "true", "" }
	f.tools[stateKeys] = func(string) (string, string) { return `["a","b"]`, "" }

	if err := StateSet("k", map[string]int{"n": 2}, 60); err != nil {
		t.Fatal(err)
	}
	if kept["last"] != `{"key":"k","ttl_s":60,"value":{"n":2}}` {
		t.Fatalf("set sent %s", kept["last"])
	}
	if err := StateSet("k", "<x>", 0); err != nil || kept["last"] != `{"key":"k","value":"<x>"}` {
		t.Fatalf("set without a ttl sent %s (%v)", kept["last"], err)
	}
	var v struct{ N int }
	if ok, err := StateGet("k", &v); !ok || err != nil || v.N != 2 {
		t.Fatalf("get = %v, %v, %+v", ok, err, v)
	}
	if ok, err := StateGet("missing", &v); ok || err != nil {
		t.Fatalf("get of an unset key = %v, %v", ok, err)
	}
	if ok, err := StateDelete("k"); !ok || err != nil {
		t.Fatalf("delete = %v, %v", ok, err)
	}
	if keys, err := StateKeys(""); err != nil || !slices.Equal(keys, []string{"a", "b"}) {
		t.Fatalf("keys = %v, %v", keys, err)
	}
	f.tools[stateSet] = func(string) (string, string) {
		return "", `{"code":"E_TOOL_ARGS","message":"over the quota","tool":"$state.set"}`
	}
	if err := StateSet("k", 1, 0); err == nil {
		t.Fatal("a refused set returned no error")
	}
}
