package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/projfile"
)

// DefaultDir is where a project keeps its scripts, relative to its root.
const DefaultDir = ".agents/tools"

// Defaults for Config's zero fields.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxStdout = 1 << 20
	DefaultMaxStderr = 16 << 10
)

// Config says where the scripts are and how they run. The zero value of
// every field but Dir is usable.
type Config struct {
	// Dir holds the scripts. Required.
	Dir string
	// Root is the project root: each script's working directory and its
	// SANDCALL_WORKDIR. If empty, the working directory.
	Root string
	// Timeout bounds one call; the script's process group is killed when
	// it passes. If zero, DefaultTimeout.
	Timeout time.Duration
	// MaxStdout caps a call's stdout: a script writing more is killed and
	// the call fails with E_OUTPUT_LIMIT. If zero, DefaultMaxStdout.
	MaxStdout int
	// MaxStderr caps the stderr kept from a call; the rest is dropped and
	// the text ends with "…[truncated]". If zero, DefaultMaxStderr.
	MaxStderr int
	// Env names variables of sandcall's environment passed on to every
	// script as they are (a token from the developer's shell, say); no
	// other variable is, beyond the fixed allow-list. If nil, none.
	Env []string
	// Reserved, if set, tells whether a script may take a tool name: it
	// returns why not ("" if it may). A reserved name is skipped with a
	// collision finding whatever the catalog holds at the time, so that
	// built-in tools and upstream servers' tools always win over scripts.
	Reserved func(name string) string
	// Report receives findings made while watching (skipped files,
	// collisions, reloads). If nil, they are logged with Logger.
	Report func(Finding)
	// Logger receives reload logs. If nil, nothing is logged.
	Logger *slog.Logger
	// Trust, if set, decides whether the script at path (absolute), whose
	// content has the SHA-256 sum (hex), may run: nil if it may, else why
	// not, in a sentence naming what changed ("the script … changed since
	// it was trusted"). It is asked when the directory is read and again
	// before every call, with the content as it is then: a script
	// rewritten after it was trusted, even to the same size with its
	// modification time put back, does not run. A refused script is not a
	// tool, and a call to its name gets the refusal (Set.Unavailable). If
	// nil, every script may run.
	Trust func(path, sum string) error
	// Contain, if set, is a directory no script may lead out of: a script
	// that is a link to a file outside it is skipped. Set it to the
	// project root for the project's own tools directory.
	Contain string
}

// MaxScriptBytes caps a script read (to hash it and parse its header).
const MaxScriptBytes = 4 << 20

// UntrustedHint is the hint of a call to a script Config.Trust refused.
const UntrustedHint = "A person reviews the script, then runs 'sandcall servers trust' in the project " +
	"('sandcall servers trust --follow-scripts' trusts its scripts as they change); until then, tell the user."

// Finding says what became of one candidate file.
type Finding struct {
	File   string // the file's base name
	Tool   string // the tool's name, when the file became (or would have become) one
	Line   int    // 1-based line of a header error; 0 if none
	Reason string // why the file was skipped; empty when it became a tool
	// Error is true for skips that are mistakes (every skip of a
	// candidate file: a file in the tools directory is meant to be a tool).
	Error bool
}

func (f Finding) String() string {
	if f.Reason == "" {
		return "ok " + f.Tool
	}
	s := "skip " + quoteName(f.File) + ": " + f.Reason
	if f.Line > 0 {
		s += fmt.Sprintf(" (line %d)", f.Line)
	}
	return s
}

var toolNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`) })

// stamp identifies a file's version for reloads: with its inode and
// change time (stamp_unix.go), which no one can set back, a rewrite is
// seen even when it keeps the size and puts the modification time back.
type stamp struct {
	size  int64
	mtime time.Time
	mode  os.FileMode
	ino   uint64
	ctime int64
}

type entry struct {
	stamp   stamp
	tool    *tools.Tool // nil when skipped
	find    Finding
	refused string // why Config.Trust refused it, if it did
}

// Set is the tools made from one directory's scripts. It is safe for
// concurrent use.
type Set struct {
	cfg Config

	reload  sync.Mutex // one Reload at a time (the watcher, Pending)
	mu      sync.Mutex
	entries map[string]entry       // by file name
	added   map[string]*tools.Tool // the tools this Set put in cat, by name
	cat     *tools.Catalog
}

// Load reads cfg.Dir: every regular file whose name does not start with
// "." is a candidate, and becomes a tool named after the file or a Finding
// saying why not. A missing directory is an empty Set. Findings are sorted
// by file name; accepted files have an empty Reason.
func Load(cfg Config) (*Set, []Finding) {
	if cfg.Root == "" {
		cfg.Root, _ = os.Getwd()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxStdout <= 0 {
		cfg.MaxStdout = DefaultMaxStdout
	}
	if cfg.MaxStderr <= 0 {
		cfg.MaxStderr = DefaultMaxStderr
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if abs, err := filepath.Abs(cfg.Dir); err == nil {
		cfg.Dir = abs
	}
	s := &Set{cfg: cfg, added: map[string]*tools.Tool{}}
	s.entries = s.scan(nil)
	return s, s.findings()
}

// Tools returns the tools of the Set, sorted by name.
func (s *Set) Tools() []*tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*tools.Tool
	for _, e := range s.entries {
		if e.tool != nil {
			out = append(out, e.tool)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Unavailable says why the script that would be the tool name is not one
// because Config.Trust refused it (a new script, or one changed since it
// was trusted), if that is why.
func (s *Set) Unavailable(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.refused != "" && e.find.Tool == name {
			return e.refused, true
		}
	}
	return "", false
}

// Pending reads the directory again when name is the name of a script
// file not yet read (created since the last poll) or one refused by
// Config.Trust (trust may have been given since), and reports whether it
// did: the caller then looks the name up again. So an edit takes effect on
// the next call, not the next poll.
func (s *Set) Pending(name string) bool {
	if !toolNameRE().MatchString(name) {
		return false
	}
	s.mu.Lock()
	e, known := s.entries[name]
	s.mu.Unlock()
	if known && e.refused == "" {
		return false
	}
	if _, err := os.Lstat(filepath.Join(s.cfg.Dir, name)); err != nil {
		return false
	}
	s.Reload()
	return true
}

func (s *Set) findings() []Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Finding, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e.find)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// AddTo adds the Set's tools to cat and remembers cat for Watch. A name
// already in cat is a collision: the local tool loses and a Finding with
// Error set reports it. Tools of the Set that the caller already put in cat
// (the same *tools.Tool) are kept, and Watch manages them too.
func (s *Set) AddTo(cat *tools.Catalog) []Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cat = cat
	var out []Finding
	for _, f := range sortedKeys(s.entries) {
		if f := s.add(s.entries[f]); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// add puts e's tool in the catalog; s.mu is held.
func (s *Set) add(e entry) *Finding {
	if e.tool == nil || s.cat == nil {
		return nil
	}
	if t, ok := s.cat.Lookup(e.tool.Name); ok && t == e.tool { // added by the caller
		s.added[e.tool.Name] = e.tool
		return nil
	}
	if err := s.cat.Add(e.tool); err != nil {
		f := e.find
		f.Error = true
		if _, ok := s.cat.Lookup(e.tool.Name); ok {
			f.Reason = "collision: a tool named " + e.tool.Name + " already exists"
		} else {
			f.Reason = err.Error()
		}
		return &f
	}
	s.added[e.tool.Name] = e.tool
	return nil
}

// Watch polls the directory every interval (a second if zero) until ctx
// ends, and applies changes to the catalog given to AddTo: new scripts are
// added, deleted ones removed, changed ones replaced (Remove, then Add).
// Findings about changed files and collisions go to Config.Report.
func (s *Set) Watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Reload()
		}
	}
}

// Reload re-reads the directory once and applies what changed (see Watch).
func (s *Set) Reload() {
	s.reload.Lock()
	defer s.reload.Unlock()
	s.mu.Lock()
	old := s.entries
	s.mu.Unlock()
	next := s.scan(old)
	var report []Finding
	s.mu.Lock()
	for name, e := range old {
		n, ok := next[name]
		if ok && same(n, e) {
			continue
		}
		if e.tool != nil && s.added[e.tool.Name] == e.tool && s.cat != nil {
			s.cat.Remove(e.tool.Name)
			delete(s.added, e.tool.Name)
		}
		if !ok {
			s.cfg.Logger.Info("local tool removed", "file", name)
		}
	}
	for _, name := range sortedKeys(next) {
		n := next[name]
		if e, ok := old[name]; ok && same(n, e) {
			continue
		}
		if f := s.add(n); f != nil {
			report = append(report, *f)
		} else {
			report = append(report, n.find)
		}
	}
	s.entries = next
	s.mu.Unlock()
	for _, f := range report {
		s.report(f)
	}
}

// same reports whether a re-read entry is the one read before: the same
// file version, the same tool (or refusal).
func same(a, b entry) bool {
	return a.stamp == b.stamp && a.tool == b.tool && a.refused == b.refused
}

func (s *Set) report(f Finding) {
	if s.cfg.Report != nil {
		s.cfg.Report(f)
		return
	}
	if f.Reason == "" {
		s.cfg.Logger.Info("local tool loaded", "tool", f.Tool)
	} else {
		s.cfg.Logger.Warn("local tool skipped", "file", f.File, "reason", f.Reason, "line", f.Line)
	}
}

// scan reads the directory; entries of old whose stamp is unchanged are
// reused without reading the file again.
func (s *Set) scan(old map[string]entry) map[string]entry {
	out := map[string]entry{}
	des, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return out
	}
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		fi, err := os.Stat(filepath.Join(s.cfg.Dir, name)) // follows links
		if err != nil || fi.IsDir() {
			continue
		}
		if !fi.Mode().IsRegular() { // a device, FIFO or socket: never opened
			out[name] = entry{stamp: stampOf(fi), find: Finding{File: name, Error: true,
				Reason: "not a regular file (a device, FIFO or socket): not read"}}
			continue
		}
		st := stampOf(fi)
		// A refused script is asked about again: trust given meanwhile
		// (`sandcall servers trust`) makes it a tool without an edit.
		if e, ok := old[name]; ok && e.stamp == st && e.refused == "" {
			out[name] = e
			continue
		}
		t, f, refused := s.build(name, fi.Mode())
		out[name] = entry{stamp: st, tool: t, find: f, refused: refused}
	}
	return out
}

// build makes the tool of one file; refused is why Config.Trust refused
// it, if it did.
func (s *Set) build(file string, mode os.FileMode) (_ *tools.Tool, f Finding, refused string) {
	f = Finding{File: file, Error: true}
	switch {
	case strings.Contains(file, "."):
		f.Reason = "a dot in the name: tool names are [A-Za-z_][A-Za-z0-9_]* (drop the extension; the #! line picks the interpreter)"
		return nil, f, ""
	case strings.Contains(file, "-") && toolNameRE().MatchString(strings.ReplaceAll(file, "-", "_")):
		fixed := strings.ReplaceAll(file, "-", "_")
		f.Reason = fmt.Sprintf("a hyphen in the name: tool names are [A-Za-z_][A-Za-z0-9_]* (rename it to %s)", fixed)
		return nil, f, ""
	case !toolNameRE().MatchString(file):
		f.Reason = "the name is not a tool name: want [A-Za-z_][A-Za-z0-9_]*, at most 64 characters"
		return nil, f, ""
	}
	f.Tool = file
	if s.cfg.Reserved != nil {
		if why := s.cfg.Reserved(file); why != "" {
			f.Reason = "collision: " + why
			return nil, f, ""
		}
	}
	if mode&0o111 == 0 {
		f.Reason = "not executable (chmod +x it)"
		return nil, f, ""
	}
	path := filepath.Join(s.cfg.Dir, file)
	content, err := projfile.Read(path, MaxScriptBytes, s.cfg.Contain)
	if err != nil {
		f.Reason = readReason(err)
		return nil, f, ""
	}
	sum := projfile.Sum(content)
	if s.cfg.Trust != nil {
		if err := s.cfg.Trust(path, sum); err != nil {
			f.Reason = err.Error()
			return nil, f, err.Error()
		}
	}
	src := content[:min(len(content), MaxHeaderBytes)]
	switch {
	case !bytes.HasPrefix(src, []byte("#!")):
		f.Reason = "no #! line: the system cannot run it (start it with #!/bin/sh, #!/usr/bin/env python3, …)"
		return nil, f, ""
	case bytes.Contains(firstLine(src), []byte("\r")):
		f.Reason = "CRLF line endings: the #! line names an interpreter ending in \\r, which does not exist (convert with dos2unix or sed -i 's/\\r$//')"
		f.Line = 1
		return nil, f, ""
	}
	h, err := ParseHeader(src)
	if err != nil {
		he := err.(*HeaderError)
		f.Reason, f.Line = he.Msg, he.Line
		return nil, f, ""
	}
	schema, err := tools.ParseSchema(schemaJSON(h.Params))
	if err != nil {
		f.Reason = "internal: " + err.Error()
		return nil, f, ""
	}
	sc := &script{name: file, path: path, params: h.Params, cfg: &s.cfg, sum: sum}
	f.Error = false
	return &tools.Tool{
		Name:        file,
		Description: h.Description,
		InputSchema: schema,
		Effects:     tools.Effects{ReadOnly: h.ReadOnly, Destructive: h.Destructive, Idempotent: h.Idempotent},
		Source:      "local",
		Pos:         fmt.Sprintf("%s:%d", path, h.Line),
		Handler:     sc.call,
	}, f, ""
}

// schemaJSON is the closed object schema of params, in header order.
func schemaJSON(params []Param) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var req []string
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Name)
		prop := map[string]string{"type": p.Type}
		if p.Description != "" {
			prop["description"] = p.Description
		}
		v, _ := json.Marshal(prop)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		if p.Required {
			req = append(req, p.Name)
		}
	}
	b.WriteString(`},"additionalProperties":false`)
	if len(req) > 0 {
		r, _ := json.Marshal(req)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func sortedKeys(m map[string]entry) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// firstLine is src up to its first newline.
func firstLine(src []byte) []byte {
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		return src[:i]
	}
	return src
}

// quoteName is a file name as it can be printed: quoted with escapes
// (strconv.Quote) when it holds anything but printable characters and no
// spaces, so that a name cannot hide itself or forge a line of output.
func quoteName(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) || r == ' ' || r == '"' || r == '\\' {
			return strconv.Quote(name)
		}
	}
	return name
}

// readReason is the Finding.Reason of a script that could not be read.
func readReason(err error) string {
	switch {
	case errors.Is(err, projfile.ErrOutside):
		return "a link leading outside the project: not read"
	case errors.Is(err, projfile.ErrTooLarge):
		return fmt.Sprintf("larger than %d bytes: not read", MaxScriptBytes)
	case errors.Is(err, projfile.ErrNotRegular):
		return "not a regular file: not read"
	}
	return "cannot be read"
}
