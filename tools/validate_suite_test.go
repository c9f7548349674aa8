package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// suiteDir returns the JSON-Schema-Test-Suite (draft 2020-12) shipped inside
// the jsonschema-go module this project depends on: read from the module
// cache, not copied.
func suiteDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/jsonschema-go").Output()
	if err != nil {
		t.Skipf("go list: %v (the suite ships in the jsonschema-go module)", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "jsonschema", "testdata", "draft2020-12")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the suite is not in the module cache: %v", err)
	}
	return dir
}

type suiteGroup struct {
	Description string
	Schema      json.RawMessage
	Tests       []struct {
		Description string
		Data        json.RawMessage // raw: 1.0 must stay 1.0
		Valid       bool
	}
}

// suiteExceptions reads testdata/jsonschema_suite_exceptions.txt: one case
// a line, "file | group | test | reason". Every reason must start with one
// of the known kinds, so the list holds only explained deviations.
func suiteExceptions(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/jsonschema_suite_exceptions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := []string{
		"integer:", // 1.0 is not an integer for tool arguments (documented in validate.go)
		"remote:",  // a remote $ref: no loader, the schema is rejected when added
	}
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, " | ")
		if len(parts) != 4 {
			t.Fatalf("exceptions: %q: want file | group | test | reason", line)
		}
		if !slices.ContainsFunc(kinds, func(k string) bool { return strings.HasPrefix(parts[3], k) }) {
			t.Fatalf("exceptions: %q: the reason must start with one of %q", line, kinds)
		}
		m[strings.Join(parts[:3], " | ")] = parts[3]
	}
	return m
}

// TestJSONSchemaSuite runs the official JSON-Schema-Test-Suite for draft
// 2020-12 through the validator: the subset decides schemas it implements,
// jsonschema-go the others. A case that disagrees with the suite must be
// listed in the exceptions file with its reason, and a listed case that
// now agrees fails the test: the list cannot go stale.
func TestJSONSchemaSuite(t *testing.T) {
	dir := suiteDir(t)
	exc := suiteExceptions(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Fatal("no suite files")
	}
	var n, fast, full, failed int
	used := map[string]bool{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(b, &groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		base := filepath.Base(file)
		for _, g := range groups {
			var s jsonschema.Schema
			var v *validator
			err := json.Unmarshal(g.Schema, &s)
			if err == nil {
				v, err = compileValidator(&s)
			}
			for _, tc := range g.Tests {
				n++
				key := base + " | " + g.Description + " | " + tc.Description
				var got bool
				switch {
				case err != nil:
					got = false // refused schemas validate nothing
				default:
					got = v.validateValue(bytes.TrimSpace(tc.Data)) == nil
					if v.full != nil {
						full++
					} else {
						fast++
					}
				}
				reason, listed := exc[key]
				used[key] = true
				switch {
				case got != tc.Valid && !listed:
					failed++
					var schema bytes.Buffer
					_ = json.Compact(&schema, g.Schema)
					t.Errorf("%s: valid = %v, want %v (compile err %v; data %s; schema %s)", key, got, tc.Valid, err, tc.Data, &schema)
				case got == tc.Valid && listed:
					t.Errorf("%s: listed as an exception (%s) but now passes: remove it", key, reason)
				}
			}
		}
	}
	for key := range exc {
		if !used[key] {
			t.Errorf("exception %q names no case of the suite: remove it", key)
		}
	}
	t.Logf("%d cases: %d decided by the subset, %d by jsonschema-go, %d refused schemas; %d exceptions", n, fast, full, n-fast-full, len(exc))
}
