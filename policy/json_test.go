package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestParseArgsAgreesWithEncodingJSON on valid and invalid inputs.
func TestParseArgsAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1,"b":[true,false,null,"x"],"c":{"d":-1.5e3}}`, ` { "a" : [ 1 , 2 ] } `,
		`"caf\u00e9 \"q\" \n"`, `"café"`, `0`, `-0`, `1e400`, `01`, `1.`, `.5`, `{"a":}`, `{"a":1,}`, `[1,]`,
		`{"a" 1}`, `tru`, `nul`, `"\x"`, "\"a\tb\"", `{"a":1}x`, ``, `{"a":"\ud800"}`, "\"\xff\"", `[1 2]`,
		`{"dup":1,"dup":2}`, `-`, `1e`, `1e+`, `123456789012345678901234567890`,
	} {
		got, gerr := parseArgs([]byte(s), 64, nil)
		var want any
		werr := json.Unmarshal([]byte(s), &want)
		if (gerr == nil) != (werr == nil) {
			t.Errorf("%q: err %v, encoding/json %v", s, gerr, werr)
			continue
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %#v, encoding/json %#v", s, got, want)
		}
	}
	// Filtered: only the named top-level members are kept; the rest are
	// still checked.
	v, err := parseArgs([]byte(`{"a":1,"b":{"c":[1,"x\u0041",null]},"s":"q\"\n"}`), 64, map[string]bool{"a": true, "s": true})
	if err != nil || !reflect.DeepEqual(v, map[string]any{"a": 1.0, "s": "q\"\n"}) {
		t.Errorf("filtered: %#v %v", v, err)
	}
	for _, bad := range []string{`{"a":1,"b":[1,]}`, `{"b":"\x"}`, `{"b":"\u12"}`, `{"b":{"c" 1}}`, `{"b":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`} {
		if _, err := parseArgs([]byte(bad), 64, map[string]bool{"a": true}); err == nil {
			t.Errorf("filtered %s: no error", bad)
		}
	}
	deep := strings.Repeat("[", 5) + strings.Repeat("]", 5)
	if _, err := parseArgs([]byte(deep), 4, nil); err != errDepth {
		t.Errorf("depth 5 under cap 4: %v", err)
	}
	if _, err := parseArgs([]byte(deep), 5, nil); err != nil {
		t.Errorf("depth 5 under cap 5: %v", err)
	}
}

func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\u0041"}],"d":-1.5e3}`, `[]`, `"\ud83d\ude00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := parseArgs(b, 10000, nil)
		var want any
		werr := json.Unmarshal(b, &want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: err %v, encoding/json %v", b, gerr, werr)
		}
		// Skipping checks validity exactly as parsing does.
		_, serr := parseArgs(b, 10000, map[string]bool{"a": true})
		if (serr == nil) != (werr == nil) {
			t.Fatalf("%q: skipping err %v, encoding/json %v", b, serr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, encoding/json %#v", b, got, want)
		}
	})
}
