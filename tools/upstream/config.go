package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandcall/sandcall/tools/projfile"
)

// DefaultTimeout bounds a server's connection and each call when its config
// sets no timeout.
const DefaultTimeout = 60 * time.Second

// Server types.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Server is one validated upstream server definition, with ${} expanded.
// Header and env values starting with "!" are still commands; they are run
// when the server is connected.
type Server struct {
	Name    string
	Source  string // the config file that defined it
	Type    string // TypeStdio, TypeHTTP or TypeSSE
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
	Timeout time.Duration // never zero
	// FollowRedirects follows an http/sse server's redirects to another
	// origin, without the configured headers; otherwise they are refused.
	FollowRedirects bool
	// EnvFile is the envFile the definition reads (VS Code), resolved;
	// "" if none. Its lines are in Env.
	EnvFile string
	// PassEnv names variables of sandcall's environment a stdio server
	// gets as they are, beside PATH, HOME, LANG and its own env (set
	// from sandcall.yaml's env_passthrough; Options.Env sets it for
	// Attach). If nil, none.
	PassEnv []string

	// commands marks the header and env values ("headers.K", "env.K") that
	// were written starting with "!": only those run. A variable whose value
	// starts with "!" never becomes a command.
	commands map[string]bool
}

// Entry is one configured server name as listed by `sandcall servers list`:
// the winning definition, or why it is not used.
type Entry struct {
	Name   string
	Source string // file of the winning definition
	// Key is the top-level key of Source that holds the definition:
	// "mcpServers" or "servers".
	Key  string
	Type string // as configured, "stdio" when absent
	// Enabled is false when the definition says "enabled": false.
	Enabled bool
	// Server is the validated definition; nil when Err is set.
	Server *Server
	// Err says why the definition is invalid ("invalid server "x": …").
	Err error
	// Shadowed lists the lower-priority files that also define the name.
	Shadowed []string
}

// Config is the merged result of every source.
type Config struct {
	// Entries are sorted by name.
	Entries []Entry
	// Warnings are problems that skip a server; the rest loads.
	Warnings []string
	// Errors are config files that could not be read or parsed, each with
	// its place (file:line:col: …); the other files load.
	Errors []string
}

// Servers returns the valid, enabled servers, sorted by name.
func (c *Config) Servers() []*Server {
	var out []*Server
	for _, e := range c.Entries {
		if e.Server != nil && e.Enabled {
			out = append(out, e.Server)
		}
	}
	return out
}

// Lookup returns the entry for name.
func (c *Config) Lookup(name string) (Entry, bool) {
	for _, e := range c.Entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// LoadConfig says where configs are read from.
type LoadConfig struct {
	// Root is the project root searched for .cursor/mcp.json,
	// .vscode/mcp.json, .mcp.json and mcp.json. If empty, the current
	// directory.
	Root string
	// Files are explicit config files, highest priority first. A missing
	// explicit file is a warning.
	Files []string
	// LookupEnv resolves ${VAR}. If nil, os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// FilesOnly reads Files alone, not the project's configs: a file only
	// sandcall reads (`serve --mcp-config`), when the project's .mcp.json
	// is the client's and lists sandcall itself.
	FilesOnly bool
}

// maxConfigBytes caps a config file read.
const maxConfigBytes = 4 << 20

type source struct {
	path     string
	key      string // "" = either "mcpServers" or "servers"
	explicit bool
}

// Load reads every source and returns the merged config. It fails only on
// nothing: unreadable or malformed files and invalid servers are warnings.
func Load(cfg LoadConfig) *Config {
	root := cfg.Root
	if root == "" {
		root = "."
	}
	envLookup := cfg.LookupEnv
	if envLookup == nil {
		envLookup = os.LookupEnv
	}
	wsFolder, _ := filepath.Abs(root)
	lookup := func(name string) (string, bool) {
		if name == "workspaceFolder" { // VS Code's ${workspaceFolder}
			return wsFolder, true
		}
		return envLookup(name)
	}
	var srcs []source
	for _, f := range cfg.Files {
		srcs = append(srcs, source{path: f, explicit: true})
	}
	if !cfg.FilesOnly {
		srcs = append(srcs,
			source{path: filepath.Join(root, ".cursor", "mcp.json"), key: "mcpServers"},
			source{path: filepath.Join(root, ".vscode", "mcp.json"), key: "servers"},
			source{path: filepath.Join(root, ".mcp.json"), key: "mcpServers"},
			source{path: filepath.Join(root, "mcp.json"), key: "mcpServers"},
		)
	}
	c := &Config{}
	byName := map[string]int{}
	seenFile := map[string]bool{}
	for _, s := range srcs {
		abs, _ := filepath.Abs(s.path)
		if seenFile[abs] {
			continue
		}
		seenFile[abs] = true
		// A project's own config may not lead outside the project (a link
		// to ~/.ssh/…); a file named explicitly is read where it is. Either
		// is read bounded: never a device or a FIFO.
		contain := ""
		if !s.explicit {
			contain = root
		}
		data, err := projfile.Read(s.path, maxConfigBytes, contain)
		if err != nil {
			if s.explicit || !errors.Is(err, os.ErrNotExist) {
				c.Errors = append(c.Errors, fmt.Sprintf("config %v", err))
			}
			continue
		}
		defs, names, key, err := parseFile(data, s.key)
		if err != nil {
			c.Errors = append(c.Errors, fmt.Sprintf("config %s:%v", s.path, err))
			continue
		}
		for _, name := range names {
			if i, ok := byName[name]; ok {
				c.Entries[i].Shadowed = append(c.Entries[i].Shadowed, s.path)
				continue
			}
			e := parseServer(name, s.path, defs[name], lookup)
			e.Key = key
			if e.Err != nil {
				c.Warnings = append(c.Warnings, e.Err.Error()+" (skipped)")
			}
			byName[name] = len(c.Entries)
			c.Entries = append(c.Entries, e)
		}
	}
	sort.Slice(c.Entries, func(i, j int) bool { return c.Entries[i].Name < c.Entries[j].Name })
	return c
}

// parseFile returns the server definitions of a config file, their names
// in document order, and the top-level key that holds them.
func parseFile(data []byte, key string) (map[string]json.RawMessage, []string, string, error) {
	plain := stripJSONC(data) // VS Code's comments and trailing commas
	var top map[string]json.RawMessage
	if err := json.Unmarshal(plain, &top); err != nil {
		return nil, nil, "", jsonError(data, err)
	}
	data = plain
	raw, ok := top[key]
	if key == "" {
		key = "mcpServers"
		if raw, ok = top[key]; !ok {
			key = "servers"
			raw, ok = top[key]
		}
	}
	if !ok {
		return nil, nil, "", nil
	}
	var defs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, nil, "", fmt.Errorf("%s: %q must be an object of servers, not %s", lineCol(data, keyOffset(data, key)), key, jsonKind(kindOf(raw)))
	}
	names := orderedKeys(raw)
	return defs, names, key, nil
}

func orderedKeys(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		if k, ok := t.(string); ok {
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// rawServer is a server as written in a config file.
type rawServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Enabled *bool             `json:"enabled"`
	Timeout json.RawMessage   `json:"timeout"`

	FollowRedirects bool   `json:"followRedirects"`
	EnvFile         string `json:"envFile"` // VS Code: KEY=VALUE lines
}

var serverNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,100}$`) })

func parseServer(name, src string, raw json.RawMessage, lookup func(string) (string, bool)) Entry {
	e := Entry{Name: name, Source: src, Type: TypeStdio, Enabled: true}
	fail := func(format string, a ...any) Entry {
		e.Err = fmt.Errorf("invalid server %q: %s", name, fmt.Sprintf(format, a...))
		return e
	}
	if !serverNameRE().MatchString(name) {
		return fail("name must be 1 to 100 characters of [a-zA-Z0-9_.-]")
	}
	var r rawServer
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&r); err != nil {
		return fail("%v", typeError(err))
	}
	if r.Type != "" {
		e.Type = r.Type
	} else if r.URL != "" && r.Command == "" {
		e.Type = TypeHTTP // Cursor's {"url": …}: streamable HTTP
	}
	if r.Enabled != nil {
		e.Enabled = *r.Enabled
	}
	s := &Server{Name: name, Source: src, Type: e.Type, Timeout: DefaultTimeout, FollowRedirects: r.FollowRedirects}
	switch s.Type {
	case TypeStdio, TypeHTTP, TypeSSE:
	default:
		return fail("type %q: want stdio, http or sse", r.Type)
	}
	if r.Command != "" && r.URL != "" {
		return fail("both command and url are set: a server is either stdio (command) or http/sse (url)")
	}
	if s.Type == TypeStdio {
		if r.Command == "" {
			return fail("stdio server needs a command")
		}
		if len(r.Headers) > 0 {
			return fail("headers are for http/sse servers")
		}
	} else {
		if r.URL == "" {
			return fail("%s server needs a url", s.Type)
		}
		if len(r.Args) > 0 || len(r.Env) > 0 || r.Cwd != "" {
			return fail("args, env and cwd are for stdio servers")
		}
	}
	t, err := parseTimeout(r.Timeout)
	if err != nil {
		return fail("timeout: %v", err)
	}
	if t > 0 {
		s.Timeout = t
	}
	x := func(field, v string) (string, error) {
		out, err := Expand(v, lookup)
		if err != nil {
			return "", fmt.Errorf("invalid server %q: %s: %w", name, field, err)
		}
		return out, nil
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	s.Command, err = x("command", r.Command)
	add(err)
	for i, a := range r.Args {
		v, err := x(fmt.Sprintf("args[%d]", i), a)
		add(err)
		s.Args = append(s.Args, v)
	}
	s.Cwd, err = x("cwd", r.Cwd)
	add(err)
	s.URL, err = x("url", r.URL)
	add(err)
	s.commands = map[string]bool{}
	s.Env, err = expandMap(r.Env, "env", x, s.commands)
	add(err)
	if r.EnvFile != "" {
		f, err := x("envFile", r.EnvFile)
		add(err)
		if err == nil {
			s.EnvFile = envFilePath(f, lookup)
			add(readEnvFile(s.EnvFile, &s.Env))
		}
	}
	s.Headers, err = expandMap(r.Headers, "headers", x, s.commands)
	add(err)
	if len(errs) > 0 {
		e.Err = errs[0]
		return e
	}
	if s.Type != TypeStdio && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
		return fail("url %q: want http:// or https://", s.URL)
	}
	e.Server = s
	return e
}

func expandMap(m map[string]string, field string, x func(string, string) (string, error), commands map[string]bool) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]string, len(m))
	for _, k := range keys {
		v, err := x(field+"."+k, m[k])
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(m[k], "!") {
			commands[field+"."+k] = true
		}
		out[k] = v
	}
	return out, nil
}

// parseTimeout reads a timeout: a JSON number of milliseconds or a Go
// duration string. Zero or absent means the default.
func parseTimeout(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err == nil {
		if ms < 0 || ms > float64(24*time.Hour/time.Millisecond) {
			return 0, fmt.Errorf("%v ms out of range", ms)
		}
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("want milliseconds (a number) or a duration string like \"30s\"")
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("%q: want milliseconds (a number) or a duration string like \"30s\"", s)
	}
	return d, nil
}

var varNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// Expand replaces ${VAR} and ${VAR:-default} in s. An unset variable
// without a default is an error; a set but empty one is its (empty) value.
// ${VAR:-d} uses d when VAR is unset or empty, as in the shell. A "$" not
// followed by "{" is kept as is; defaults are not expanded again.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		expr := rest[:j]
		if in, ok := strings.CutPrefix(expr, "input:"); ok {
			return "", fmt.Errorf("${input:%s} is one of VS Code's own inputs, which only VS Code can prompt for: put the value in an environment variable and write ${env:NAME} (or ${NAME})", in)
		}
		expr = strings.TrimPrefix(expr, "env:") // VS Code's ${env:NAME}
		name, def, hasDef := strings.Cut(expr, ":-")
		if !varNameRE().MatchString(name) {
			return "", fmt.Errorf("bad variable name %q in ${%s}", name, expr)
		}
		v, ok := lookup(name)
		switch {
		case hasDef && (!ok || v == ""):
			v = def
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set (use ${%s:-default} for a default)", name, name)
		}
		b.WriteString(v)
		s = rest[j+1:]
	}
}
