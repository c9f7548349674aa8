package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultTrustFile is where sandcall keeps the project configs a person
// trusted (`sandcall servers trust`), next to the pins.
const DefaultTrustFile = ".sandcall/trust.json"

// Trust is the set of project server definitions, and project scripts, that
// a person allowed to run: each pinned by the hash of what runs. A server
// defined in a project's config (.mcp.json and friends, checked into a
// repository anyone may clone) starts, and its "!command" values run, only
// when its definition is trusted; a changed definition needs trust again.
// The hash covers everything that decides what runs or where credentials go
// (type, command, args, env, cwd, url, headers, …, as written, before ${}
// expansion), not "enabled" and "timeout": `servers enable|disable` keeps
// the trust. The file is JSON, mode 0600, written atomically.
type Trust struct {
	path    string
	root    string            // the project root: the trust file's directory's parent
	Servers map[string]string `json:"servers"` // "file#name" → hash
	Scripts map[string]string `json:"scripts"` // script path → hash
}

// OpenTrust reads the trust file at path; a missing file is an empty set.
func OpenTrust(path string) (*Trust, error) {
	t := &Trust{path: path, root: filepath.Dir(filepath.Dir(path)), Servers: map[string]string{}, Scripts: map[string]string{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("trust file %s is corrupt (%v): delete it and run 'sandcall servers trust' again", path, err)
	}
	if t.Servers == nil {
		t.Servers = map[string]string{}
	}
	if t.Scripts == nil {
		t.Scripts = map[string]string{}
	}
	return t, nil
}

// Save writes the set to its file.
func (t *Trust) Save() error {
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), ".trust-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), t.path)
}

// rel is path relative to the project root, so that keys do not depend on
// the directory sandcall runs in.
func (t *Trust) rel(path string) string {
	root, err1 := filepath.Abs(t.root)
	abs, err2 := filepath.Abs(path)
	if err1 == nil && err2 == nil {
		if r, err := filepath.Rel(root, abs); err == nil {
			path = r
		}
	}
	return filepath.ToSlash(filepath.Clean(path))
}

func (t *Trust) serverKey(e Entry) string { return t.rel(e.Source) + "#" + e.Name }

// DefinitionHash is the hash of what a configured server runs: its
// definition as written in its file, without "enabled" and "timeout".
func DefinitionHash(e Entry) (string, error) {
	data, err := os.ReadFile(e.Source)
	if err != nil {
		return "", err
	}
	defs, _, _, err := parseFile(data, e.Key)
	if err != nil {
		return "", err
	}
	raw, ok := defs[e.Name]
	if !ok {
		return "", fmt.Errorf("server %q is no longer in %s", e.Name, e.Source)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	delete(m, "enabled")
	delete(m, "timeout")
	b, _ := json.Marshal(m) // map keys sorted: canonical
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// Trusted reports whether e's definition, as it is now, was trusted.
func (t *Trust) Trusted(e Entry) bool {
	want, ok := t.Servers[t.serverKey(e)]
	if !ok {
		return false
	}
	h, err := DefinitionHash(e)
	return err == nil && h == want
}

// TrustServer records e's definition as it is now.
func (t *Trust) TrustServer(e Entry) error {
	h, err := DefinitionHash(e)
	if err != nil {
		return err
	}
	t.Servers[t.serverKey(e)] = h
	return nil
}

// ScriptTrusted reports whether the script at path, with these contents,
// was trusted.
func (t *Trust) ScriptTrusted(path string, content []byte) bool {
	want, ok := t.Scripts[t.rel(path)]
	return ok && want == contentHash(content)
}

// TrustScript records the script at path with these contents.
func (t *Trust) TrustScript(path string, content []byte) {
	t.Scripts[t.rel(path)] = contentHash(content)
}

func contentHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// WhatRuns describes what starting s runs, for a person deciding whether to
// trust it: the command line of a stdio server, the URL of an http/sse one,
// and every "!command" value.
func WhatRuns(s *Server) string {
	var parts []string
	if s.Type == TypeStdio {
		parts = append(parts, "runs "+strings.Join(append([]string{s.Command}, s.Args...), " "))
	} else {
		parts = append(parts, "connects to "+s.URL)
	}
	var cmds []string
	for k := range s.commands {
		cmds = append(cmds, k)
	}
	sort.Strings(cmds)
	for _, k := range cmds {
		field, key, _ := strings.Cut(k, ".")
		v := s.Env[key]
		if field == "headers" {
			v = s.Headers[key]
		}
		parts = append(parts, fmt.Sprintf("runs %s for %s", strings.TrimPrefix(v, "!"), k))
	}
	return strings.Join(parts, "; ")
}

// UntrustedMessage says that s was not started because its project config
// is not trusted, what it would run, and how to trust it.
func UntrustedMessage(s *Server) string {
	return fmt.Sprintf("server %q from %s is not trusted, so it was not started (it %s): "+
		"review it, then run 'sandcall servers trust' (or pass --trust-project)", s.Name, s.Source, WhatRuns(s))
}
