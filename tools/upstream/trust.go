package upstream

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sandcall/sandcall/tools/projfile"
	"github.com/sandcall/sandcall/tools/trust"
)

// maxPinnedFileBytes caps a project file hashed for a server's pin (its
// executable, a script its command names).
const maxPinnedFileBytes = 256 << 20

// DefinitionHash is the hash of a configured server's definition as
// written in its file, without "enabled" and "timeout": `servers
// enable|disable` and a new timeout keep the trust.
func DefinitionHash(e Entry) (string, error) {
	data, err := projfile.Read(e.Source, maxConfigBytes, "")
	if err != nil {
		return "", err
	}
	defs, _, _, err := parseFile(data, e.Key)
	if err != nil {
		return "", fmt.Errorf("%s: %w", e.Source, err)
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
	return projfile.Sum(b), nil
}

// Pin is what trusting the server of e pins, as things are now, for a
// project at root: the hash of its definition, the executable its command
// resolves to, and the SHA-256 of every file of the project it runs or
// names — its executable when that is a project file, a script named in
// its arguments (sh ./start.sh pins start.sh), a file named in an env or
// "!command" value, its envFile. A named file that cannot be hashed (a
// FIFO, a device, over 256 MiB) is an error: the server cannot be trusted
// as it is. Directories are not pinned (see WhatRuns).
func Pin(e Entry, root string) (trust.Server, error) {
	def, err := DefinitionHash(e)
	if err != nil {
		return trust.Server{}, err
	}
	p := trust.Server{Definition: def}
	s := e.Server
	if s == nil { // an invalid definition: only as written
		return p, nil
	}
	p.Runs = WhatRuns(s)
	files := map[string]string{}
	add := func(path string) error {
		if _, seen := files[projfile.Rel(root, path)]; seen {
			return nil
		}
		h, err := projfile.Hash(path, maxPinnedFileBytes, "")
		if err != nil {
			return fmt.Errorf("server %q names %w", s.Name, err)
		}
		files[projfile.Rel(root, path)] = h
		return nil
	}
	if s.Type == TypeStdio {
		if exe, err := resolveCommand(s, root); err == nil {
			p.Executable = exe
			if inProject(root, exe) {
				if err := add(exe); err != nil {
					return trust.Server{}, err
				}
			}
		}
	}
	for _, f := range namedFiles(s, root) {
		if err := add(f); err != nil {
			return trust.Server{}, err
		}
	}
	if len(files) > 0 {
		p.Files = files
	}
	return p, nil
}

// workDir is the directory a stdio server starts in: its cwd (relative to
// root), else root.
func workDir(s *Server, root string) string {
	switch {
	case s.Cwd == "":
		return root
	case filepath.IsAbs(s.Cwd):
		return s.Cwd
	}
	return filepath.Join(root, s.Cwd)
}

// resolveCommand is the file a stdio server's command runs, every link
// resolved: a path with a separator from the server's directory, a bare
// name from PATH.
func resolveCommand(s *Server, root string) (string, error) {
	path := s.Command
	if strings.ContainsRune(path, filepath.Separator) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(workDir(s, root), path)
		}
	} else {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", err
		}
		path = p
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// inProject reports whether path (absolute) is in the project at root,
// as named or with its links resolved.
func inProject(root, path string) bool {
	r, err := filepath.Abs(root)
	if err != nil {
		return false
	}
	if projfile.Within(r, path) {
		return true
	}
	if c, err := projfile.Canonical(r); err == nil {
		if rp, err := filepath.EvalSymlinks(path); err == nil {
			return projfile.Within(c, rp)
		}
	}
	return false
}

// codeExts are the extensions of codefiles.txt.
var codeExts = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(codeFilesTxt, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, ext := range strings.Fields(line) {
			out[strings.ToLower(ext)] = true
		}
	}
	return out
})

//go:embed codefiles.txt
var codeFilesTxt string

// namedFiles are the files of the project at root that s runs or loads as
// code, by what its arguments, env values and "!command" values name (as
// words of the value, or after an "="), and its envFile, sorted. A named
// file counts when it is executable, is the first argument that is not an
// option, or has a code extension (codefiles.txt): a data file it names (a
// JSON database) changes as it works and is not pinned.
func namedFiles(s *Server, root string) []string {
	var texts []string
	texts = append(texts, s.Args...)
	for _, v := range s.Env {
		texts = append(texts, v)
	}
	for k := range s.commands {
		field, key, _ := strings.Cut(k, ".")
		if field == "headers" {
			texts = append(texts, s.Headers[key])
		}
	}
	script := "" // the first argument that is not an option
	for _, a := range s.Args {
		if !strings.HasPrefix(a, "-") {
			script = a
			break
		}
	}
	base := workDir(s, root)
	seen := map[string]bool{}
	var out []string
	consider := func(word string, always bool) {
		path := word
		if !filepath.IsAbs(path) {
			path = filepath.Join(base, path)
		}
		path, err := filepath.Abs(path)
		if err != nil {
			return
		}
		if seen[path] || !inProject(root, path) {
			return
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			if _, lerr := os.Lstat(path); lerr == nil && (always || codeExts()[strings.ToLower(filepath.Ext(path))]) {
				out = append(out, path) // a dangling link: Hash says so
				seen[path] = true
			}
			return
		case fi.IsDir():
			return // not pinned
		case always || word == script || fi.Mode()&0o111 != 0 || codeExts()[strings.ToLower(filepath.Ext(path))]:
			out = append(out, path)
			seen[path] = true
		}
	}
	for _, t := range texts {
		for _, w := range words(t) {
			consider(w, false)
		}
	}
	if s.EnvFile != "" {
		consider(s.EnvFile, true)
	}
	sort.Strings(out)
	return out
}

// words splits a command-line value into the words that may name files:
// at spaces, shell operators, quotes and "=".
func words(s string) []string {
	if len(s) > 64<<10 {
		return nil
	}
	ws := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || strings.ContainsRune(";&|()<>=\"'`,", r)
	})
	out := ws[:0]
	for _, w := range ws {
		if strings.HasPrefix(w, "-") || strings.Contains(w, "://") || strings.ContainsRune(w, 0) || len(w) > 4096 {
			continue
		}
		out = append(out, strings.TrimPrefix(w, "!"))
	}
	return out
}

// WhatRuns describes what starting s runs, for a person deciding whether to
// trust it: the command line of a stdio server (with the names of the
// variables it sets, and its envFile), the URL of an http/sse one (with
// the names of the headers it sends), and every "!command" value.
func WhatRuns(s *Server) string {
	var parts []string
	names := func(m map[string]string) string {
		return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
	}
	if s.Type == TypeStdio {
		what := "runs " + strings.Join(append([]string{s.Command}, s.Args...), " ")
		if len(s.Env) > 0 {
			what += " with env " + names(s.Env)
		}
		if s.EnvFile != "" {
			what += " (env from " + s.EnvFile + ")"
		}
		parts = append(parts, what)
	} else {
		what := "connects to " + s.URL
		if len(s.Headers) > 0 {
			what += " sending headers " + names(s.Headers)
		}
		parts = append(parts, what)
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
// is not trusted (why: "never trusted in this project", "start.sh
// changed", …), what it would run, and how to trust it.
func UntrustedMessage(s *Server, why string) string {
	return fmt.Sprintf("server %q from %s is not trusted (%s), so it was not started (it %s): "+
		"review it, then run 'sandcall servers trust' in the project (or pass --trust-project)", s.Name, s.Source, why, WhatRuns(s))
}
