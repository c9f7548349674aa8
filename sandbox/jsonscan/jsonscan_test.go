package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValue(t *testing.T) {
	for _, c := range []struct {
		in      string
		depth   int
		end, at int // end -1: an error at at
		msg     string
	}{
		{` {"a": [1, 2.5e3, "x\u00e9", true, null]} `, 5, 41, 0, ""},
		{`"abc" tail`, 5, 5, 0, ""},
		{`-0.5e+7,`, 5, 7, 0, ""},
		{`[[[]]]`, 3, 6, 0, ""},
		{`[[[]]]`, 2, -1, 2, MsgTooDeep},
		{``, 5, -1, 0, MsgEOF},
		{`   `, 5, -1, 3, MsgEOF},
		{`tru`, 5, -1, 0, MsgLiteral},
		{`01`, 5, 1, 0, ""}, // the caller checks what follows
		{`-`, 5, -1, 1, MsgNumber},
		{`1.`, 5, -1, 2, MsgNumber},
		{`1e`, 5, -1, 2, MsgNumber},
		{`"ab`, 5, -1, 0, MsgUnterm},
		{`"a\`, 5, -1, 2, MsgStringEOF},
		{`"a\x"`, 5, -1, 2, MsgEscape},
		{`"a\u12g4"`, 5, -1, 2, MsgUEscape},
		{"\"a\x01\"", 5, -1, 2, MsgControl},
		{"\"a\xff\"", 5, -1, 2, MsgUTF8},
		{`{1:2}`, 5, -1, 1, MsgKey},
		{`{"a" 2}`, 5, -1, 5, MsgColon},
		{`{"a":2 "b":3}`, 5, -1, 7, `expected ',' or '}'`},
		{`[1 2]`, 5, -1, 3, `expected ',' or ']'`},
		{`[1,]`, 5, -1, 3, `invalid character ']'`},
		{`{"a":1,}`, 5, -1, 7, MsgKey},
		{`@`, 5, -1, 0, `invalid character '@'`},
	} {
		end, at, msg := Value([]byte(c.in), 0, c.depth)
		if end != c.end || (end < 0 && (at != c.at || msg != c.msg)) {
			t.Errorf("Value(%q) = %d, %d, %q; want %d, %d, %q", c.in, end, at, msg, c.end, c.at, c.msg)
		}
	}
}

func TestSkipAndIter(t *testing.T) {
	b := []byte(`{"rows": [ {"id":1,"n":"a]\"}"}, [2,3] ,"x" ], "k\"ey" : -1.5 , "e":{}}`)
	it := Elems(b, 0)
	var got []string
	for {
		ks, ke, vs, ve, ok := it.Member()
		if !ok {
			break
		}
		got = append(got, string(b[ks:ke])+"="+string(b[vs:ve]))
	}
	want := []string{`"rows"=[ {"id":1,"n":"a]\"}"}, [2,3] ,"x" ]`, `"k\"ey"=-1.5`, `"e"={}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("members:\n got %q\nwant %q", got, want)
	}
	at := bytes.IndexByte(b, '[')
	if n := Count(b, at); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
	if n := Count([]byte(`[ ]`), 0); n != 0 {
		t.Errorf("Count of an empty array = %d", n)
	}
	if e := Skip(b, 0); e != len(b) {
		t.Errorf("Skip = %d, want %d", e, len(b))
	}
	// Never past the slice, whatever the text.
	for _, s := range []string{`"abc\`, `[[`, `{"a`, `12`, ``} {
		if e := Skip([]byte(s), 0); e < 0 || e > len(s) {
			t.Errorf("Skip(%q) = %d", s, e)
		}
	}
}

func TestDepth(t *testing.T) {
	for in, want := range map[string]int{
		`1`:                      0,
		`[]`:                     1,
		`{"a":[{"b":[]}],"c":1}`: 4,
		`["[[[[", {"x":"}}"}]`:   2,
		`["\"[["]`:               1,
	} {
		if got := Depth(in); got != want {
			t.Errorf("Depth(%q) = %d, want %d", in, got, want)
		}
		if got := Depth([]byte(in)); got != want {
			t.Errorf("Depth([]byte %q) = %d, want %d", in, got, want)
		}
	}
}

func TestTrim(t *testing.T) {
	if got := string(Trim([]byte(" \t\n{}\r "))); got != "{}" {
		t.Errorf("Trim = %q", got)
	}
	if got := string(Trim([]byte("\v{}"))); got != "\v{}" {
		t.Errorf("Trim trimmed \\v, which is not JSON white space: %q", got)
	}
}

// TestValueAllocs: scanning valid text allocates nothing (the validator's
// hot path depends on it).
func TestValueAllocs(t *testing.T) {
	b := []byte(`{"member_id":"ENG-001","q":"Q\u0033","limit":5,"tags":["a"],"f":{"x":[1.5e3,true,null]}}`)
	if n := testing.AllocsPerRun(100, func() {
		if end, _, _ := Value(b, 0, 10); end != len(b) {
			t.Fatal("not scanned")
		}
		_ = Skip(b, 0)
		_ = Depth(b)
		it := Elems(b, 0)
		for {
			if _, _, _, _, ok := it.Member(); !ok {
				break
			}
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

// FuzzScan compares the scanner with encoding/json: the same texts are
// valid; on valid text, the same ends, depths, members, items, strings and
// numbers.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}],"c":"d\"e","f":-1.5e-3}`, `[]`, `{}`, ` [ "x" , 1 ] `, `"\u00e9\n"`,
		`0`, `-0.0E+1`, `true`, `[1,]`, `{"a" 1}`, "\"\xff\"", `"\ud800"`, `[[[[]]]]`, `01`, `1.`, `{"a":1}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end, _, msg := Value(b, 0, len(b)+1)
		valid := end >= 0 && Space(b, end) == len(b)
		// Stricter than encoding/json in one way: invalid UTF-8 (which
		// json.Valid lets through in strings) is an error.
		if valid != (json.Valid(b) && utf8.Valid(b)) {
			t.Fatalf("Value says valid=%v (%s), json.Valid says %v for %q", valid, msg, !valid, b)
		}
		if !valid {
			_ = Skip(b, 0) // must not panic
			_ = Depth(b)
			return
		}
		start := Space(b, 0)
		if e := Skip(b, start); e != end {
			t.Fatalf("Skip = %d, Value = %d for %q", e, end, b)
		}
		if d, want := Depth(b), jsonDepth(t, b); d != want {
			t.Fatalf("Depth = %d, want %d for %q", d, want, b)
		}
		switch b[start] {
		case '[':
			var items []json.RawMessage
			if err := json.Unmarshal(b, &items); err != nil {
				t.Fatal(err)
			}
			it := Elems(b, start)
			for i := 0; ; i++ {
				s, e, ok := it.Next()
				if !ok {
					if i != len(items) {
						t.Fatalf("%d items, want %d in %q", i, len(items), b)
					}
					break
				}
				if i >= len(items) || !bytes.Equal(b[s:e], items[i]) {
					t.Fatalf("item %d = %q in %q", i, b[s:e], b)
				}
			}
			if n := Count(b, start); n != len(items) {
				t.Fatalf("Count = %d, want %d", n, len(items))
			}
		case '{':
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			if _, err := dec.Token(); err != nil {
				t.Fatal(err)
			}
			it := Elems(b, start)
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					t.Fatal(err)
				}
				ks, ke, vs, ve, ok := it.Member()
				if !ok {
					t.Fatalf("members ended before key %q in %q", k, b)
				}
				var key string
				if err := json.Unmarshal(b[ks:ke], &key); err != nil || key != k {
					t.Fatalf("key %q (%v), want %q in %q", b[ks:ke], err, k, b)
				}
				if !bytes.Equal(b[vs:ve], raw) {
					t.Fatalf("value %q, want %q in %q", b[vs:ve], raw, b)
				}
			}
			if _, _, _, _, ok := it.Member(); ok {
				t.Fatalf("a member past the end in %q", b)
			}
		case '"':
			e, esc, _, _ := String(b, start)
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			if e != end || (!esc && s != string(b[start+1:e-1])) {
				t.Fatalf("String = %d, %v for %q (json: %q)", e, esc, b, s)
			}
		default:
			if c := b[start]; c == '-' || c >= '0' && c <= '9' {
				e, frac, _, _ := Number(b, start)
				var n json.Number
				if err := json.Unmarshal(b, &n); err != nil {
					t.Fatal(err)
				}
				if e != end || string(n) != string(b[start:e]) || frac != strings.ContainsAny(string(n), ".eE") {
					t.Fatalf("Number = %d, %v for %q", e, frac, b)
				}
			}
		}
	})
}

// jsonDepth is the nesting depth of valid JSON, by encoding/json's tokens.
func jsonDepth(t *testing.T, b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // a number beyond float64 is valid JSON
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}
