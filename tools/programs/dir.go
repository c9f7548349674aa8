package programs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/local"
)

// DefaultDir is where a project keeps its programs, relative to its root.
const DefaultDir = ".agents/programs"

// DirConfig says where a project's programs are and which may be tools.
// The zero value of every field but Dir is usable.
type DirConfig struct {
	// Dir holds the programs. Required.
	Dir string
	// Trusted, if set, decides whether the file at path, whose content
	// (the very text that becomes the tool) has the hex SHA-256 sum, may
	// become a tool (a project's programs run only once a person trusted
	// them, by content, like its scripts); a refused one is skipped with
	// UntrustedReason. If nil, every program may.
	Trusted func(path, sum string) bool
	// Reserved, if set, says why a program may not take a name ("" if it
	// may): built-in and upstream tools win over programs.
	Reserved func(name string) string
	// Report receives findings made while watching. If nil, they are
	// logged with Logger.
	Report func(local.Finding)
	// Logger receives reload logs. If nil, nothing is logged.
	Logger *slog.Logger
}

// Dir is the program tools of one directory. It is safe for concurrent
// use.
type Dir struct {
	cfg DirConfig
	reg *Registry

	mu      sync.Mutex
	entries map[string]dirEntry    // by file name
	added   map[string]*tools.Tool // the tools this Dir put in cat, by name
	cat     *tools.Catalog
}

type dirEntry struct {
	sum     [sha256.Size]byte // of the file's content
	trusted bool
	tool    *tools.Tool // nil when skipped
	find    local.Finding
}

var toolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`) })

// LoadDir reads cfg.Dir: every regular file whose name does not start
// with "." is a candidate, and becomes a tool or a Finding saying why not.
// A missing directory is an empty Dir. Findings are sorted by file name.
func LoadDir(reg *Registry, cfg DirConfig) (*Dir, []local.Finding) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if abs, err := filepath.Abs(cfg.Dir); err == nil {
		cfg.Dir = abs
	}
	d := &Dir{cfg: cfg, reg: reg, added: map[string]*tools.Tool{}}
	d.entries = d.scan(nil)
	return d, d.findings()
}

// Tools returns the Dir's tools, sorted by name.
func (d *Dir) Tools() []*tools.Tool {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*tools.Tool
	for _, e := range d.entries {
		if e.tool != nil {
			out = append(out, e.tool)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (d *Dir) findings() []local.Finding {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]local.Finding, 0, len(d.entries))
	for _, e := range d.entries {
		out = append(out, e.find)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// AddTo adds the Dir's tools to cat and remembers cat for Watch; a name
// cat already holds (another tool's) wins and is reported. Tools the caller
// already put in cat are adopted.
func (d *Dir) AddTo(cat *tools.Catalog) []local.Finding {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cat = cat
	var out []local.Finding
	for _, name := range sortedNames(d.entries) {
		if f := d.add(d.entries[name]); f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// add puts e's tool in the catalog; d.mu is held.
func (d *Dir) add(e dirEntry) *local.Finding {
	if e.tool == nil || d.cat == nil {
		return nil
	}
	if t, ok := d.cat.Lookup(e.tool.Name); ok && t == e.tool {
		d.added[e.tool.Name] = e.tool
		return nil
	}
	if err := d.cat.Add(e.tool); err != nil {
		f := e.find
		f.Error = true
		f.Reason = "collision: a tool named " + e.tool.Name + " already exists"
		if _, ok := d.cat.Lookup(e.tool.Name); !ok {
			f.Reason = err.Error()
		}
		return &f
	}
	d.added[e.tool.Name] = e.tool
	return nil
}

// Watch re-reads the directory every interval (a second if zero) until ctx
// ends, and applies the changes to the catalog given to AddTo: a program
// edited is replaced by its new version (checked for trust again), a new
// one added, a removed one removed.
func (d *Dir) Watch(ctx context.Context, interval time.Duration) { poll(ctx, interval, d.Reload) }

// poll calls f every interval (a second if zero) until ctx ends.
func poll(ctx context.Context, interval time.Duration, f func()) {
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
			f()
		}
	}
}

// Reload re-reads the directory once and applies what changed.
func (d *Dir) Reload() {
	d.mu.Lock()
	old := d.entries
	d.mu.Unlock()
	next := d.scan(old)
	var report []local.Finding
	d.mu.Lock()
	for name, e := range old {
		if n, ok := next[name]; ok && n.same(e) {
			continue
		}
		if e.tool != nil {
			d.reg.forget(e.tool)
			if d.added[e.tool.Name] == e.tool && d.cat != nil {
				d.cat.Remove(e.tool.Name)
				delete(d.added, e.tool.Name)
			}
		}
	}
	for _, name := range sortedNames(next) {
		n := next[name]
		if e, ok := old[name]; ok && n.same(e) {
			continue
		}
		if f := d.add(n); f != nil {
			report = append(report, *f)
		} else {
			report = append(report, n.find)
		}
	}
	d.entries = next
	d.mu.Unlock()
	for _, f := range report {
		if d.cfg.Report != nil {
			d.cfg.Report(f)
		} else if f.Reason == "" {
			d.cfg.Logger.Info("program tool loaded", "tool", f.Tool)
		} else {
			d.cfg.Logger.Warn("program skipped", "file", f.File, "reason", f.Reason, "line", f.Line)
		}
	}
}

func (e dirEntry) same(o dirEntry) bool { return e.sum == o.sum && e.trusted == o.trusted }

// scan reads the directory; an entry of old with the same content and
// trust is kept as it is.
func (d *Dir) scan(old map[string]dirEntry) map[string]dirEntry {
	out := map[string]dirEntry{}
	des, err := os.ReadDir(d.cfg.Dir)
	if err != nil {
		return out
	}
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(d.cfg.Dir, name)
		src, ok := readProgram(path)
		if !ok {
			continue
		}
		sum := sha256.Sum256(src)
		e := dirEntry{sum: sum, trusted: d.cfg.Trusted == nil || d.cfg.Trusted(path, hex.EncodeToString(sum[:]))}
		if o, ok := old[name]; ok && o.same(e) {
			out[name] = o
			continue
		}
		e.tool, e.find = d.build(name, path, src, e.trusted)
		out[name] = e
	}
	return out
}

// readProgram reads a regular file (a link is followed) of at most
// MaxSourceBytes+1 bytes; ok is false for anything else.
func readProgram(path string) ([]byte, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, int64(MaxSourceBytes)+1))
	return src, err == nil
}

// MaxSourceBytes caps a program's text: the default source limit of a run
// (docs/limits.md).
var MaxSourceBytes = sandbox.DefaultLimits().MaxSourceBytes

// UntrustedReason is the Finding.Reason of a program file DirConfig.Trusted
// refused: new, or changed since the project was trusted.
const UntrustedReason = "not trusted: new or changed since the project was trusted; review it, then run 'sandcall servers trust' (or pass --trust-project)"

// build makes the tool of one file.
func (d *Dir) build(file, path string, src []byte, trusted bool) (*tools.Tool, local.Finding) {
	f := local.Finding{File: file, Error: true}
	ext := filepath.Ext(file)
	base := strings.TrimSuffix(file, ext)
	lang := map[string]sandbox.Language{".js": sandbox.JavaScript, ".ts": sandbox.TypeScript}[ext]
	switch {
	case lang == "":
		f.Reason = "not a program: want NAME.js or NAME.ts"
		return nil, f
	case !toolName().MatchString(base):
		f.Reason = "the name is not a tool name: want [A-Za-z_][A-Za-z0-9_]*, at most 64 characters, then .js or .ts"
		return nil, f
	}
	f.Tool = base
	if d.cfg.Reserved != nil {
		if why := d.cfg.Reserved(base); why != "" {
			f.Reason = "collision: " + why
			return nil, f
		}
	}
	if !trusted {
		f.Reason = UntrustedReason
		return nil, f
	}
	if len(src) > MaxSourceBytes {
		f.Reason = fmt.Sprintf("over %d bytes", MaxSourceBytes)
		return nil, f
	}
	h, err := local.ParseHeader(src)
	if err != nil {
		he := err.(*local.HeaderError)
		f.Reason, f.Line = he.Msg, he.Line
		return nil, f
	}
	p := &Program{Name: base, Description: h.Description, Language: lang, Source: string(src),
		InputSchema: local.SchemaJSON(h.Params), Origin: SourceFile, Pos: fmt.Sprintf("%s:%d", path, h.Line),
		Effects: tools.Effects{ReadOnly: h.ReadOnly, Destructive: h.Destructive, Idempotent: h.Idempotent}}
	if h.ReadOnly || h.Destructive || h.Idempotent {
		p.Effects.Declared = true
	}
	p.SHA256 = hashSource(lang, p.Source)
	pl, perr := planOf(lang, p.Source)
	if perr != nil {
		f.Reason = "does not parse: " + perr.Message
		return nil, f
	}
	p.Plan = pl
	t, err := d.reg.tool(p)
	if err != nil {
		f.Reason = err.Error()
		return nil, f
	}
	f.Error = false
	return t, f
}

func sortedNames[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
