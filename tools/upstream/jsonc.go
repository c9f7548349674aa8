package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
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

// readEnvFile adds the KEY=VALUE lines of a VS Code envFile to env (blank
// lines and # comments skipped, an optional "export " and quotes around
// the value dropped); a key env already has keeps its value. A relative
// path is relative to the workspace folder.
func readEnvFile(path string, lookup func(string) (string, bool), env *map[string]string) error {
	if !filepath.IsAbs(path) {
		if ws, ok := lookup("workspaceFolder"); ok {
			path = filepath.Join(ws, path)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("envFile: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFileBytes+1))
	if err != nil {
		return fmt.Errorf("envFile: %v", err)
	}
	if len(data) > maxEnvFileBytes {
		return fmt.Errorf("envFile %s: larger than %d bytes", path, maxEnvFileBytes)
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
