package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// configDocFile is the configuration reference; its section
// configDocSection holds one table row per sandcall.yaml key:
// | `key` | type | default | meaning |
const (
	configDocFile    = "../../docs/configuration.md"
	configDocSection = "## sandcall.yaml keys"
)

// TestConfigDocListsEveryKey: docs/configuration.md has a row, with a type,
// a default and a meaning, for every key sandcall.yaml can hold (walked by
// reflection from File's yaml tags), and no row for a key the code
// does not read.
func TestConfigDocListsEveryKey(t *testing.T) {
	t.Parallel()
	keys := configKeys(reflect.TypeFor[File](), "")
	if len(keys) < 40 {
		t.Fatalf("walked only %d keys from File: %v", len(keys), keys)
	}
	rows, err := configDocRows(configDocFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		cells, ok := rows[k]
		if !ok {
			t.Errorf("%s: no row for the key `%s` under %q (| `%s` | type | default | meaning |)", configDocFile, k, configDocSection, k)
			continue
		}
		if len(cells) != 3 || slices.Contains(cells, "") {
			t.Errorf("%s: the row of `%s` needs a type, a default and a meaning, has %q", configDocFile, k, cells)
		}
	}
	for k := range rows {
		if !slices.Contains(keys, k) {
			t.Errorf("%s: a row for `%s`, which sandcall.yaml does not have (keys: %s)", configDocFile, k, strings.Join(keys, ", "))
		}
	}
}

// TestConfigKeysNotation pins the notation the doc uses, so that a change
// to the walk shows here first: sections are dotted, a list of objects is
// key[], inline structs add their keys to their parent's.
func TestConfigKeysNotation(t *testing.T) {
	t.Parallel()
	keys := configKeys(reflect.TypeFor[File](), "")
	for _, want := range []string{
		"version", "limits.timeout", "http.max_connections", "http.rate_limit.per_second",
		"auth.tokens", "auth.tokens[].sha256", "auth.public_url", "auth.jwt.jwks_url",
		"principal.id", "pool.worker_reuse", "tracing.headers", "env_passthrough",
	} {
		if !slices.Contains(keys, want) {
			t.Errorf("configKeys lacks %q: %v", want, keys)
		}
	}
	for _, not := range []string{"limits", "auth", "auth.jwt", "principal", ""} {
		if slices.Contains(keys, not) {
			t.Errorf("configKeys lists the section %q as a key", not)
		}
	}
}

// configKeys returns the dotted path of every key of the YAML struct t,
// in field order: a nested struct (or a pointer to one) is a section whose
// keys are listed, not a key; an inline struct's keys belong to the parent;
// a list of structs is a key itself (prefix.name) and its items' keys are
// prefix.name[].key. Everything else (scalars, lists of scalars, maps) is a
// leaf. Fields without a yaml tag are not read from the file.
func configKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		tag, ok := f.Tag.Lookup("yaml")
		if !ok || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if strings.Contains(opts, "inline") {
			keys = append(keys, configKeys(ft, prefix)...)
			continue
		}
		if name == "-" {
			continue
		}
		path := prefix + name
		switch {
		case ft.Kind() == reflect.Struct:
			keys = append(keys, configKeys(ft, path+".")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, path)
			keys = append(keys, configKeys(ft.Elem(), path+"[].")...)
		default:
			keys = append(keys, path)
		}
	}
	return keys
}

// configDocRows reads the table rows of the keys section of the doc at
// path: the key in backticks in the first cell, then the other cells,
// trimmed.
func configDocRows(path string) (map[string][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_, sec, ok := strings.Cut(string(b), "\n"+configDocSection+"\n")
	if !ok {
		return nil, &os.PathError{Op: "find section " + configDocSection, Path: path, Err: os.ErrNotExist}
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	rows := map[string][]string{}
	for _, line := range strings.Split(sec, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "| `")
		if !ok {
			continue
		}
		key, rest, ok := strings.Cut(rest, "` |")
		if !ok {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(rest), "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows[key] = cells
	}
	return rows, nil
}
