// Package trust keeps what a person allowed a project's files to make
// sandcall do, outside the project: in the user's own state directory
// ($XDG_STATE_HOME/sandcall, else ~/.local/state/sandcall), one record per
// project, keyed by the project's canonical path — as direnv keeps its
// allow list and VS Code its workspace trust. A checkout therefore cannot
// trust itself: a record committed to a repository is never read, and a
// clone elsewhere is another project, trusted by no one yet.
//
// A record pins, for each configured MCP server, the hash of its
// definition as written, the executable its command resolves to and the
// hash of every project file the command names (Server); for each script
// of the project's tools directory, the hash of its content; and for the
// project's sandcall.yaml, the keys that need trust (Config). The record
// also holds the per-project choice to follow the scripts as they change
// (FollowScripts).
//
// What is trusted is decided by the packages that read the sources
// (tools/upstream pins a server, tools/local checks a script before each
// run); this package stores the pins and explains how two pins differ.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandcall/sandcall/tools/projfile"
)

// InCheckoutFile is where earlier versions kept trust, inside the project.
// Such a file is never read (a repository could commit its own); commands
// warn once when they find one.
const InCheckoutFile = ".sandcall/trust.json"

// maxRecordBytes caps a record read.
const maxRecordBytes = 16 << 20

// recordVersion is the format version of a record.
const recordVersion = 1

// StateDir is the user's state directory for sandcall:
// $XDG_STATE_HOME/sandcall, else $HOME/.local/state/sandcall.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "sandcall"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no state directory: neither XDG_STATE_HOME nor HOME is set")
	}
	return filepath.Join(home, ".local", "state", "sandcall"), nil
}

// Server is what trusting a configured server pinned.
type Server struct {
	// Definition is the SHA-256 of the definition as written in its file
	// ("enabled" and "timeout" left out).
	Definition string `json:"definition"`
	// Runs says what it runs, as shown when it was trusted.
	Runs string `json:"runs,omitempty"`
	// Executable is the file the command resolved to, links resolved.
	Executable string `json:"executable,omitempty"`
	// Files are the project files the server runs or names (its
	// executable when it is one, start.sh of `sh ./start.sh`, an envFile),
	// by path relative to the project root, each with its SHA-256.
	Files map[string]string `json:"files,omitempty"`
}

// Changes says, one phrase each, how s differs from the pin old: empty
// when they are the same.
func (s Server) Changes(old Server) []string {
	var out []string
	if s.Definition != old.Definition {
		out = append(out, "its definition changed")
	}
	if s.Executable != old.Executable {
		switch {
		case old.Executable == "":
			out = append(out, "its command now runs "+s.Executable)
		case s.Executable == "":
			out = append(out, "its command no longer resolves (was "+old.Executable+")")
		default:
			out = append(out, fmt.Sprintf("its command now runs %s (was %s)", s.Executable, old.Executable))
		}
	}
	out = append(out, fileChanges(s.Files, old.Files)...)
	return out
}

func fileChanges(now, old map[string]string) []string {
	var out []string
	for _, f := range slices.Sorted(maps.Keys(now)) {
		h, had := old[f]
		switch {
		case !had:
			out = append(out, "it now runs or names "+f)
		case h != now[f]:
			out = append(out, f+" changed")
		}
	}
	for _, f := range slices.Sorted(maps.Keys(old)) {
		if _, ok := now[f]; !ok {
			out = append(out, "it no longer names "+f)
		}
	}
	return out
}

// Config is what trusting a project's sandcall.yaml pinned: the keys that
// need trust, as written.
type Config struct {
	// Hash is the SHA-256 of the keys and their values (ConfigHash).
	Hash string `json:"hash"`
	// Keys shows each key's value as it was trusted (secrets left out).
	Keys map[string]string `json:"keys,omitempty"`
}

// ConfigHash is the hash of keys (key → its value as written, in JSON).
func ConfigHash(keys map[string]json.RawMessage) string {
	b, _ := json.Marshal(keys) // map keys sorted
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// record is the file of one project.
type record struct {
	Version       int               `json:"version"`
	Root          string            `json:"root"`
	FollowScripts bool              `json:"follow_scripts,omitempty"`
	Servers       map[string]Server `json:"servers,omitempty"`
	Scripts       map[string]string `json:"scripts,omitempty"`
	Configs       map[string]Config `json:"configs,omitempty"`
	Updated       string            `json:"updated,omitempty"`
}

// Project is the trust given to one project. It is safe for concurrent
// use; Reload picks up a record another process (`sandcall servers trust`)
// wrote.
type Project struct {
	// Root is the project's canonical path.
	Root string
	file string

	mu    sync.Mutex
	rec   record
	stamp stamp
}

type stamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// Open returns the trust of the project at root (any path to it: it is
// made canonical), from the user's state directory. A project never
// trusted has an empty record.
func Open(root string) (*Project, error) {
	dir, err := StateDir()
	if err != nil {
		return nil, err
	}
	return OpenIn(dir, root)
}

// OpenIn is Open with the state directory given.
func OpenIn(stateDir, root string) (*Project, error) {
	canon, err := projfile.Canonical(root)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(canon))
	p := &Project{Root: canon, file: filepath.Join(stateDir, "trust", hex.EncodeToString(sum[:16])+".json")}
	p.rec = p.empty()
	if err := p.Reload(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Project) empty() record { return record{Version: recordVersion, Root: p.Root} }

// File is where the record is kept.
func (p *Project) File() string { return p.file }

// Reload reads the record again if its file changed since it was read.
func (p *Project) Reload() error {
	fi, err := os.Stat(p.file)
	p.mu.Lock()
	defer p.mu.Unlock()
	if errors.Is(err, os.ErrNotExist) {
		p.rec, p.stamp = p.empty(), stamp{}
		return nil
	}
	if err != nil {
		return err
	}
	st := stampOf(fi)
	if st == p.stamp {
		return nil
	}
	b, err := projfile.Read(p.file, maxRecordBytes, "")
	if err != nil {
		return err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("trust record %s is corrupt (%v): delete it and run 'sandcall servers trust' again", p.file, err)
	}
	if r.Root != p.Root {
		// A hash collision or a file copied from another project: its
		// trust is not this project's.
		r = p.empty()
	}
	p.rec, p.stamp = r, st
	return nil
}

// Save writes the record (mode 0600, in a directory of mode 0700).
func (p *Project) Save() error {
	p.mu.Lock()
	p.rec.Version = recordVersion
	p.rec.Root = p.Root
	p.rec.Updated = time.Now().UTC().Format(time.RFC3339)
	b, err := json.MarshalIndent(p.rec, "", "  ")
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.file), 0o700); err != nil {
		return err
	}
	if err := projfile.WriteAtomic(p.file, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return p.Reload()
}

// Empty reports whether nothing of the project was ever trusted.
func (p *Project) Empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.rec.Servers) == 0 && len(p.rec.Scripts) == 0 && len(p.rec.Configs) == 0 && !p.rec.FollowScripts
}

// Server returns the pin of the server of key ("file#name").
func (p *Project) Server(key string) (Server, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.rec.Servers[key]
	return s, ok
}

// Servers returns every server pin, by key.
func (p *Project) Servers() map[string]Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]Server, len(p.rec.Servers))
	for k, v := range p.rec.Servers {
		out[k] = v
	}
	return out
}

// SetServers replaces every server pin.
func (p *Project) SetServers(m map[string]Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rec.Servers = m
}

// Script returns the hash a script (path relative to the root) was
// trusted with.
func (p *Project) Script(rel string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.rec.Scripts[rel]
	return h, ok
}

// Scripts returns every script pin, by path.
func (p *Project) Scripts() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.rec.Scripts))
	for k, v := range p.rec.Scripts {
		out[k] = v
	}
	return out
}

// SetScripts replaces every script pin.
func (p *Project) SetScripts(m map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rec.Scripts = m
}

// FollowScripts reports whether the owner chose to trust the project's
// scripts as they change (`sandcall servers trust --follow-scripts`).
func (p *Project) FollowScripts() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rec.FollowScripts
}

// SetFollowScripts records that choice.
func (p *Project) SetFollowScripts(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rec.FollowScripts = on
}

// Config returns the pin of a project config file (path relative to the
// root).
func (p *Project) Config(rel string) (Config, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.rec.Configs[rel]
	return c, ok
}

// SetConfig pins a project config file's keys that need trust; a Config
// with no keys forgets the file.
func (p *Project) SetConfig(rel string, c Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(c.Keys) == 0 && c.Hash == "" {
		delete(p.rec.Configs, rel)
		return
	}
	if p.rec.Configs == nil {
		p.rec.Configs = map[string]Config{}
	}
	p.rec.Configs[rel] = c
}

// Configs returns every config pin, by path.
func (p *Project) Configs() map[string]Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]Config, len(p.rec.Configs))
	for k, v := range p.rec.Configs {
		out[k] = v
	}
	return out
}

// ServerKey is the key of a server's pin: its config file, relative to
// the project root, and its name.
func ServerKey(root, source, name string) string {
	return projfile.Rel(root, source) + "#" + name
}

// Quote shows a value of a config key for a person: JSON, cut at 80 bytes.
func Quote(v json.RawMessage) string {
	s := strings.Join(strings.Fields(string(v)), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
