package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
	"github.com/sandcall/sandcall/tools/projfile"
)

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code writes its settings and mcp.json, into plain JSON of the same
// length: comments and trailing commas become spaces (newlines kept), so
// that every offset still points at the same byte of the original, which
// SetEnabled edits in place. Text inside strings is never touched.
func stripJSONC(data []byte) []byte {
	out := append([]byte(nil), data...)
	blank := func(i, j int) {
		for k := i; k < j; k++ {
			if out[k] != '\n' && out[k] != '\r' {
				out[k] = ' '
			}
		}
	}
	lastComma := -1 // a comma not yet followed by a value
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"':
			lastComma = -1
			i = jsonscan.Skip(out, i) - 1 // at the closing quote
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			j := i
			for j < len(out) && out[j] != '\n' {
				j++
			}
			blank(i, j)
			i = j - 1
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i + 2
			for j+1 < len(out) && !(out[j] == '*' && out[j+1] == '/') {
				j++
			}
			j = min(j+2, len(out))
			blank(i, j)
			i = j - 1
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	return out
}

// span is one member of a JSON object in a text: the offsets of its key's
// opening quote, and of its value's first byte and end.
type span struct {
	key                  string
	keyAt, valAt, valEnd int
}

// objectMembers scans the object that starts at s[at] ('{') and returns
// its members and the offset of its closing '}'. s is plain JSON (see
// stripJSONC).
func objectMembers(s []byte, at int) ([]span, int, error) {
	if at >= len(s) || s[at] != '{' {
		return nil, 0, errors.New("not a JSON object")
	}
	i := jsonscan.Space(s, at+1)
	var out []span
	for {
		if i >= len(s) {
			return nil, 0, errors.New("unterminated object")
		}
		if s[i] == '}' {
			return out, i, nil
		}
		if s[i] != '"' {
			return nil, 0, fmt.Errorf("offset %d: want a key", i)
		}
		kEnd := jsonscan.Skip(s, i)
		var key string
		if err := json.Unmarshal(s[i:kEnd], &key); err != nil {
			return nil, 0, err
		}
		j := jsonscan.Space(s, kEnd)
		if j >= len(s) || s[j] != ':' {
			return nil, 0, fmt.Errorf("offset %d: want ':'", j)
		}
		v := jsonscan.Space(s, j+1)
		vEnd := jsonscan.Skip(s, v)
		if vEnd <= v {
			return nil, 0, fmt.Errorf("offset %d: want a value", v)
		}
		out = append(out, span{key, i, v, vEnd})
		i = jsonscan.Space(s, vEnd)
		if i < len(s) && s[i] == ',' {
			i = jsonscan.Space(s, i+1)
		}
	}
}

// typeError says what a field of a server definition must be, in the
// config file's terms: `"enabled" must be true or false`, not Go's
// "cannot unmarshal string into Go struct field rawServer.enabled".
func typeError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("not valid JSON at offset %d: %v", se.Offset, se)
		}
		return err
	}
	want := "a " + te.Type.Kind().String()
	switch te.Type.Kind() {
	case reflect.Bool, reflect.Pointer:
		want = "true or false"
	case reflect.String:
		want = "a string"
	case reflect.Slice:
		want = "an array of strings"
	case reflect.Map:
		want = "an object whose values are strings"
	}
	return fmt.Errorf("%q must be %s, not %s", te.Field, want, jsonKind(te.Value))
}

// jsonKind names a JSON value kind as UnmarshalTypeError.Value gives it.
func jsonKind(v string) string {
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true/false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return v
}

// maxEnvFileBytes caps an envFile read.
const maxEnvFileBytes = 256 << 10

// envFilePath is an envFile's path: a relative one is relative to the
// workspace folder.
func envFilePath(path string, lookup func(string) (string, bool)) string {
	if !filepath.IsAbs(path) {
		if ws, ok := lookup("workspaceFolder"); ok {
			path = filepath.Join(ws, path)
		}
	}
	return path
}

// readEnvFile adds the KEY=VALUE lines of a VS Code envFile to env (blank
// lines and # comments skipped, an optional "export " and quotes around
// the value dropped); a key env already has keeps its value. The file is
// read bounded (never a device or a FIFO).
func readEnvFile(path string, env *map[string]string) error {
	data, err := projfile.Read(path, maxEnvFileBytes, "")
	if err != nil {
		return fmt.Errorf("envFile %v", err)
	}
	if *env == nil {
		*env = map[string]string{}
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		k = strings.TrimSpace(k)
		if !ok || !varNameRE().MatchString(k) {
			return fmt.Errorf("envFile %s: line %d: want KEY=VALUE", path, n+1)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if _, set := (*env)[k]; !set {
			(*env)[k] = v
		}
	}
	return nil
}

// jsonError is a JSON syntax or type error of a config file as
// "line:col: message" (the caller puts the file name first). The offsets
// of the error are those of data (stripJSONC keeps them).
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "unexpected end of JSON input":
		return fmt.Errorf("%s: unexpected end of JSON input: a } or ] is missing", lineCol(data, len(data)))
	case errors.As(err, &se):
		return fmt.Errorf("%s: %s", lineCol(data, int(se.Offset)-1), se.Error())
	case errors.As(err, &te):
		return fmt.Errorf("%s: the file must hold a JSON object, not %s", lineCol(data, int(te.Offset)-1), jsonKind(te.Value))
	}
	return fmt.Errorf("%s: %v", lineCol(data, 0), err)
}

// lineCol is the 1-based line and column of byte offset off of data.
func lineCol(data []byte, off int) string {
	off = max(0, min(off, len(data)))
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%d:%d", line, col)
}

// keyOffset is the offset of the value of the top-level key of the JSON
// object data (plain JSON: see stripJSONC), or 0.
func keyOffset(data []byte, key string) int {
	members, _, err := objectMembers(data, jsonscan.Space(data, 0))
	if err != nil {
		return 0
	}
	for _, m := range members {
		if m.key == key {
			return m.valAt
		}
	}
	return 0
}

// kindOf names the JSON kind of a raw value as UnmarshalTypeError does.
func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
