package upstream

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServerValidation(t *testing.T) {
	vars := env(map[string]string{"TOKEN": "s3cr3t", "EMPTY": ""})
	long := strings.Repeat("a", 101)
	tests := []struct {
		name, def string
		err       string // substring; "" = valid
	}{
		{"ok", `{"command":"srv","args":["-v"]}`, ""},
		{"http", `{"type":"http","url":"https://x/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`, ""},
		{"sse", `{"type":"sse","url":"http://x/sse"}`, ""},
		{"badtype", `{"type":"ws","url":"http://x"}`, `type "ws"`},
		{"nocmd", `{}`, "needs a command"},
		{"nourl", `{"type":"http"}`, "needs a url"},
		{"both", `{"command":"x","url":"http://x"}`, "both command and url"},
		{"bad name!", `{"command":"x"}`, "name must be"},
		{long, `{"command":"x"}`, "name must be"},
		{"hdrstdio", `{"command":"x","headers":{"a":"b"}}`, "headers are for http"},
		{"envhttp", `{"type":"http","url":"http://x","env":{"a":"b"}}`, "are for stdio"},
		{"unset", `{"type":"http","url":"http://x","headers":{"Authorization":"Bearer ${NOPE}"}}`, `headers.Authorization: environment variable NOPE is not set`},
		{"unsetarg", `{"command":"x","args":["${NOPE}"]}`, `args[0]`},
		{"default", `{"command":"x","args":["${NOPE:-d}","${EMPTY:-e}","${EMPTY}"]}`, ""},
		{"badurl", `{"type":"http","url":"ftp://x"}`, "want http"},
		{"timeoutms", `{"command":"x","timeout":1500}`, ""},
		{"timeoutstr", `{"command":"x","timeout":"2s"}`, ""},
		{"timeoutbad", `{"command":"x","timeout":"soon"}`, "timeout"},
		{"timeoutneg", `{"command":"x","timeout":-1}`, "timeout"},
		{"unknownfield", `{"command":"x","args":"notalist"}`, "invalid server"},
		{"", `{"command":"x"}`, "name must be"},
		{strings.Repeat("b", 100), `{"command":"x"}`, ""},
		{"a.b-c_D9", `{"command":"x"}`, ""},
		{"ssenourl", `{"type":"sse"}`, "sse server needs a url"},
		{"enabledbad", `{"command":"x","enabled":"no"}`, "invalid server"},
		{"disabled", `{"command":"x","enabled":false}`, ""},
		{"unseturl", `{"type":"http","url":"https://${HOST}/mcp"}`, `url: environment variable HOST is not set`},
		{"unsetenv", `{"command":"x","env":{"K":"${NOPE}"}}`, `env.K: environment variable NOPE is not set`},
		{"unsetcwd", `{"command":"x","cwd":"${NOPE}"}`, `cwd: environment variable NOPE is not set`},
		{"badvar", `{"command":"x","args":["${1X}"]}`, `args[0]: bad variable name`},
		{"unterminated", `{"command":"x","args":["${X"]}`, `args[0]: unterminated`},
		{"cmdvalue", `{"type":"http","url":"http://x","headers":{"Authorization":"!echo tok"}}`, ""},
		{"timeoutbig", `{"command":"x","timeout":"48h"}`, "timeout"},
		{"timeouttype", `{"command":"x","timeout":true}`, "timeout"},
	}
	for _, tc := range tests {
		e := parseServer(tc.name, "f.json", []byte(tc.def), vars)
		if tc.err == "" {
			if e.Err != nil || e.Server == nil {
				t.Errorf("%s: unexpected error %v", tc.name, e.Err)
			}
			continue
		}
		if e.Err == nil || !strings.Contains(e.Err.Error(), tc.err) || !strings.HasPrefix(e.Err.Error(), `invalid server "`) {
			t.Errorf("%s: err = %v, want %q", tc.name, e.Err, tc.err)
		}
	}
	e := parseServer("d", "f", []byte(`{"command":"x","args":["${NOPE:-d}","${EMPTY:-e}","${EMPTY}"],"timeout":1500}`), vars)
	if got := strings.Join(e.Server.Args, ","); got != "d,e," || e.Server.Timeout != 1500*time.Millisecond {
		t.Errorf("args = %q, timeout %v", got, e.Server.Timeout)
	}
	e = parseServer("d", "f", []byte(`{"command":"x","timeout":"2s"}`), vars)
	if e.Server.Timeout != 2*time.Second {
		t.Errorf("timeout = %v", e.Server.Timeout)
	}
	e = parseServer("d", "f", []byte(`{"command":"x"}`), vars)
	if e.Server.Timeout != DefaultTimeout || e.Server.Type != TypeStdio {
		t.Errorf("defaults = %+v", e.Server)
	}
	e = parseServer("d", "f", []byte(`{"type":"http","url":"http://x","headers":{"A":"Bearer ${TOKEN}"}}`), vars)
	if e.Server.Headers["A"] != "Bearer s3cr3t" {
		t.Errorf("headers = %v", e.Server.Headers)
	}
}

func TestLoadPriority(t *testing.T) {
	root := t.TempDir()
	explicit := filepath.Join(t.TempDir(), "team.json")
	writeFile(t, explicit, `{"servers":{"a":{"command":"from-explicit"}}}`)
	writeFile(t, filepath.Join(root, ".cursor", "mcp.json"), `{"mcpServers":{"a":{"command":"from-cursor"},"b":{"command":"from-cursor"}}}`)
	writeFile(t, filepath.Join(root, ".vscode", "mcp.json"), `{"servers":{"b":{"command":"from-vscode"},"c":{"command":"from-vscode"}},"mcpServers":{"ignored":{"command":"x"}}}`)
	writeFile(t, filepath.Join(root, ".mcp.json"), `{"mcpServers":{"c":{"command":"from-dotmcp"},"d":{"command":"x","enabled":false},"bad":{"url":"http://x","command":"y"}}}`)
	writeFile(t, filepath.Join(root, "mcp.json"), `{"mcpServers":{"e":{"command":"from-mcp"},"a":{"command":"from-mcp"}}}`)
	cfg := Load(LoadConfig{Root: root, Files: []string{explicit, filepath.Join(root, "missing.json")}, LookupEnv: env(nil)})
	want := map[string]string{"a": "from-explicit", "b": "from-cursor", "c": "from-vscode", "e": "from-mcp"}
	var got []string
	for _, s := range cfg.Servers() {
		got = append(got, s.Name)
		if s.Command != want[s.Name] {
			t.Errorf("%s: command %q, want %q", s.Name, s.Command, want[s.Name])
		}
	}
	if strings.Join(got, ",") != "a,b,c,e" {
		t.Errorf("servers = %v", got)
	}
	a, _ := cfg.Lookup("a")
	if len(a.Shadowed) != 2 || !strings.HasSuffix(a.Shadowed[0], filepath.Join(".cursor", "mcp.json")) || !strings.HasSuffix(a.Shadowed[1], "mcp.json") {
		t.Errorf("a shadowed = %v", a.Shadowed)
	}
	if d, _ := cfg.Lookup("d"); d.Enabled || d.Err != nil {
		t.Errorf("d = %+v", d)
	}
	if _, ok := cfg.Lookup("ignored"); ok {
		t.Error(".vscode/mcp.json: mcpServers key read")
	}
	bad, _ := cfg.Lookup("bad")
	if bad.Err == nil {
		t.Error("bad: no error")
	}
	ws := strings.Join(cfg.Warnings, "\n")
	if !strings.Contains(ws, `invalid server "bad"`) || !strings.Contains(strings.Join(cfg.Errors, "\n"), "missing.json") {
		t.Errorf("warnings = %s, errors = %s", ws, cfg.Errors)
	}
}

// TestLoadMalformedFile: a config that is not JSON is an error with its
// place (file:line:col), as YAML errors have; the other files load.
func TestLoadMalformedFile(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{not json`, ".mcp.json:1:2: invalid character 'n' looking for beginning of object key string"},
		{"{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"}\n", ".mcp.json:3:1: unexpected end of JSON input: a } or ] is missing"},
		{"{\n  // a comment\n  \"mcpServers\": {\"a\": {\"command\": \"x\"},}\n  \"x\": 1\n}", ".mcp.json:4:3: invalid character '\"' after object key:value pair"},
		{`[1]`, ".mcp.json:1:1: the file must hold a JSON object, not an array"},
		{`{"mcpServers": [1]}`, `.mcp.json:1:16: "mcpServers" must be an object of servers, not an array`},
	} {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, ".mcp.json"), tc.src)
		writeFile(t, filepath.Join(root, "mcp.json"), `{"mcpServers":{"ok":{"command":"x"}}}`)
		cfg := Load(LoadConfig{Root: root})
		if len(cfg.Servers()) != 1 || len(cfg.Errors) != 1 || !strings.HasSuffix(cfg.Errors[0], tc.want) {
			t.Errorf("%q: servers %v, errors %q; want one ending %q", tc.src, cfg.Servers(), cfg.Errors, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"A": "1", "E": ""})
	for in, want := range map[string]string{
		"":           "",
		"plain $A":   "plain $A",
		"${A}":       "1",
		"x${A}y${A}": "x1y1",
		"${B:-def}":  "def",
		"${E:-def}":  "def",
		"${E}":       "",
		"${A:-def}":  "1",
		"${B:-a:-b}": "a:-b",
		"${B:-}":     "",
		"${B:-${A}}": "${A}",
	} {
		got, err := Expand(in, vars)
		if in == "${B:-${A}}" {
			// The default ends at the first "}": "${A" then a literal "}".
			want = "${A}"
		}
		if err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${B}", "${", "${A", "${}", "${1A}", "${A B}"} {
		if _, err := Expand(in, vars); err == nil {
			t.Errorf("Expand(%q): no error", in)
		}
	}
}

func TestHeaderValue(t *testing.T) {
	ctx := context.Background()
	if v, err := HeaderValue(ctx, "plain"); err != nil || v != "plain" {
		t.Errorf("plain = %q, %v", v, err)
	}
	f := filepath.Join(t.TempDir(), "n")
	// The command counts its runs: cached, it runs once.
	cmd := "!echo x >> " + f + "; echo '  tok  '"
	for range 2 {
		if v, err := HeaderValue(ctx, cmd); err != nil || v != "tok" {
			t.Fatalf("command = %q, %v", v, err)
		}
	}
	if b, _ := os.ReadFile(f); string(b) != "x\n" {
		t.Errorf("command ran %q", b)
	}
	for _, bad := range []string{"!", "!exit 3", "!true", "!printf 'a\\nb'"} {
		if _, err := HeaderValue(ctx, bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	s := parseServer("x", "f", []byte(`{"type":"http","url":"http://x","headers":{"Authorization":"!exit 1","B":"${BANG}"}}`), env(map[string]string{"BANG": "!touch /tmp/never"})).Server
	if s.Headers["B"] != "!touch /tmp/never" || s.commands["headers.B"] {
		t.Errorf("a variable became a command: %+v", s)
	}
	if _, err := s.resolve(ctx); err == nil || !strings.Contains(err.Error(), `invalid server "x": headers.Authorization`) {
		t.Errorf("resolve err = %v", err)
	}
}

func TestToolName(t *testing.T) {
	for _, tc := range [][3]string{
		{"demo", "ping", "demo_ping"},
		{"github", "github_search", "github_search"},
		{"github", "github_github_x", "github_github_x"},
		{"My-Server", "Get.Issue", "my_server_get_issue"},
		{"a", "x__-y", "a_x_y"},
		{"github", "github", "github_github"},
	} {
		if got := ToolName(tc[0], tc[1]); got != tc[2] {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestCleanText(t *testing.T) {
	in := "Hi\u200b there\x07\u202e!\nline\ttab"
	if got := CleanText(in, 100); got != "Hi there!\nline\ttab" {
		t.Errorf("got %q", got)
	}
	if got := CleanText(strings.Repeat("é", 10), 5); got != "éé" {
		t.Errorf("capped = %q", got)
	}
}

func TestPins(t *testing.T) {
	var p Pins
	check := func(name, hash string) bool {
		t.Helper()
		ok, err := p.Check(name, hash)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !check("t", "h1") || !check("t", "h1") {
		t.Fatal("first sight rejected")
	}
	if check("t", "h2") || strings.Join(p.Pending(), ",") != "t" {
		t.Fatal("change accepted")
	}
	if ok, err := p.Approve("t"); !ok || err != nil || !check("t", "h2") || len(p.Pending()) != 0 {
		t.Fatal("approval not kept")
	}
}

// FuzzParsePins: a pin file is read at every start; whatever it holds,
// parsing neither panics nor accepts a hash that is not a SHA-256 in hex.
func FuzzParsePins(f *testing.F) {
	for _, s := range []string{`{"version":1,"tools":{}}`, `{"version":1,"tools":{"a_b":{"hash":"` + strings.Repeat("ab", 32) + `","pinned":"x"}}}`, `{`, `[]`, `{"version":1,"tools":{"a":{"hash":1}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parsePins([]byte(s))
		if err != nil {
			return
		}
		for name, h := range m {
			if !isHexHash(h) {
				t.Fatalf("accepted hash %q for %q", h, name)
			}
		}
	})
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-x}", "a${", "${:-}", "$${A}}", "${A:-${B}}"} {
		f.Add(s)
	}
	vars := env(map[string]string{"A": "1"})
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Expand(s, vars)
		if err == nil && !strings.Contains(s, "${") && out != s {
			t.Fatalf("Expand(%q) = %q without ${", s, out)
		}
	})
}

func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"Bearer ${TOKEN}", "${TOKEN:-x}", "plain", "${", "!"} {
		f.Add(s)
	}
	vars := env(map[string]string{"TOKEN": "t"})
	f.Fuzz(func(t *testing.T, s string) {
		def := []byte(`{"type":"http","url":"http://x","headers":{"H":` + quote(s) + `}}`)
		e := parseServer("x", "f", def, vars)
		if e.Err == nil && e.Server == nil {
			t.Fatal("no server and no error")
		}
		if e.Err != nil && !strings.HasPrefix(e.Err.Error(), `invalid server "x": `) {
			t.Fatalf("error %q", e.Err)
		}
		if e.Err != nil || strings.HasPrefix(s, "!") {
			return // never run fuzzed commands
		}
		// A value not written with "!" is never run, whatever it expands to.
		r, err := e.Server.resolve(context.Background())
		if err != nil || r.Headers["H"] != e.Server.Headers["H"] {
			t.Fatalf("resolve = %v, %v", r, err)
		}
	})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
