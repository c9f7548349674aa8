package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools/projfile"
)

// DefaultPinFile is where sandcall keeps the pins of upstream tool
// definitions, relative to the working directory (the project root, where
// .mcp.json is read too).
const DefaultPinFile = ".sandcall/pins.json"

// pinFileVersion is the format version of the pin file written: 2 keys
// pins by server and tool (PinKey). Version 1 files, keyed by catalog name,
// are still read: their entries are legacy pins (see CheckMigrating).
const pinFileVersion = 2

// PinKey is the key of the pin of the upstream tool named tool on the
// server named server: "<server>/<tool>". A server name never holds a "/"
// (serverNameRE), so the key is unambiguous, and it never equals a
// catalog name (which has no "/"), the key of a version 1 pin.
func PinKey(server, tool string) string { return server + "/" + tool }

// maxPinFileBytes caps the pin file read.
const maxPinFileBytes = 8 << 20

// ErrPinFile is wrapped by the errors of a pin file that cannot be read or
// parsed: its pins are unknown, so nothing is trusted on its account.
var ErrPinFile = errors.New("pin file unusable")

// Pins remembers the hash of each upstream tool's definition, keyed by
// server and tool (PinKey), not by catalog name: two servers whose tools
// share a catalog name (a clash) have a pin each, and renaming how a name
// is made never moves a pin to another server's tool. The first definition seen is trusted and
// pinned, and a later, different one is held as pending, its tool disabled,
// until an operator approves it (Approve, Pin, `sandcall tools approve`).
// It is safe for concurrent use.
//
// The zero value keeps pins in memory for the life of the process.
// OpenPins keeps them in a file, so that a definition that changed while
// sandcall was down is still caught at the next start. Share keeps them in
// a store shared by replicas (pins_shared.go).
//
// # File format and safety
//
// The file is JSON: {"version":2,"tools":{"SERVER/TOOL":{"hash":"<sha256
// hex>","pinned":"<RFC 3339 time>"}}}. A version 1 file (keys are catalog
// names) is read as legacy pins and rewritten as version 2 at the next
// write, its entries kept. It is written with mode 0600 in a
// directory created with mode 0700, atomically (a temporary file in the
// same directory, synced, then renamed over the old one), and every write
// re-reads the file under an exclusive lock (flock on NAME.lock, on Unix)
// so that a serving sandcall and `sandcall tools approve` do not lose each
// other's pins. A file that cannot be parsed is an error (ErrPinFile),
// never an empty set: deleting it trusts every current definition again,
// which only an operator should decide.
type Pins struct {
	path     string // "" = memory only
	readOnly bool

	mu      sync.Mutex
	hashes  map[string]string // tool name → pinned hash
	pending map[string]string // tool name → changed hash awaiting approval
	stamp   fileStamp         // of the file last read
	// unseen is set when a read of the file (by Check or Pin) changed the
	// pins: the next Reload reports it even if the file has not changed
	// since, so that an approval is never consumed unnoticed.
	unseen bool
	// shared, if set, keeps the pins instead of the file (Share,
	// pins_shared.go); seeded once the file's pins were copied into it,
	// version the pins' change counter last read.
	shared  store.Store
	seeded  bool
	version string
}

// pinFile is the JSON form of a pin file.
type pinFile struct {
	Version int                 `json:"version"`
	Tools   map[string]pinEntry `json:"tools"`
}

type pinEntry struct {
	Hash   string `json:"hash"`
	Pinned string `json:"pinned,omitempty"`
}

// fileStamp tells whether a file changed since it was read. Size and time
// alone miss a rewrite within one tick of a coarse clock, so the file's
// identity counts too: every write replaces the file (projfile.WriteAtomic).
type fileStamp struct {
	size    int64
	modTime time.Time
	exists  bool
	fi      os.FileInfo
}

func stampOf(fi os.FileInfo) fileStamp {
	return fileStamp{size: fi.Size(), modTime: fi.ModTime(), exists: true, fi: fi}
}

// same reports whether st and o stamp the same, unchanged file.
func (st fileStamp) same(o fileStamp) bool {
	if st.exists != o.exists {
		return false
	}
	if !st.exists {
		return true
	}
	return st.size == o.size && st.modTime.Equal(o.modTime) && os.SameFile(st.fi, o.fi)
}

// OpenPins reads the pin file at path (a missing file is an empty set; it
// is created at the first pin). If readOnly, new definitions are trusted in
// memory only and nothing is ever written: for commands that merely look,
// such as `sandcall tools list`. A file that exists but cannot be read or
// parsed is an error wrapping ErrPinFile.
func OpenPins(path string, readOnly bool) (*Pins, error) {
	if path == "" {
		return nil, errors.New("upstream: empty pin file path")
	}
	p := &Pins{path: path, readOnly: readOnly}
	m, st, err := readPinFile(path)
	if err != nil {
		return nil, err
	}
	p.hashes, p.pending, p.stamp = m, map[string]string{}, st
	return p, nil
}

// Path returns the pin file, or "" for pins kept in memory.
func (p *Pins) Path() string { return p.path }

func (p *Pins) init() {
	if p.hashes == nil {
		p.hashes = map[string]string{}
	}
	if p.pending == nil {
		p.pending = map[string]string{}
	}
}

// readPinFile returns the pins of the file at path (none if it does not
// exist) and its stamp.
func readPinFile(path string) (map[string]string, fileStamp, error) {
	// Bounded, and never a device or a FIFO (a pin file in a checkout may
	// be a link to /dev/zero).
	data, err := projfile.Read(path, maxPinFileBytes, "")
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, fileStamp{}, nil
	}
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("%w: %v", ErrPinFile, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("%w: %s: %v", ErrPinFile, path, err)
	}
	m, err := parsePins(data)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("%w: %s: %v; fix it or restore it from a backup (deleting it trusts every current upstream tool definition again)", ErrPinFile, path, err)
	}
	return m, stampOf(fi), nil
}

// parsePins parses the JSON of a pin file.
func parsePins(data []byte) (map[string]string, error) {
	var pf pinFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("not a pin file: %v", err)
	}
	if dec.More() {
		return nil, errors.New("not a pin file: data after the JSON object")
	}
	if pf.Version != 1 && pf.Version != pinFileVersion {
		return nil, fmt.Errorf("version %d: want %d", pf.Version, pinFileVersion)
	}
	m := make(map[string]string, len(pf.Tools))
	for name, e := range pf.Tools {
		if !isHexHash(e.Hash) {
			return nil, fmt.Errorf("tool %q: hash %q is not a SHA-256 in hex", name, e.Hash)
		}
		m[name] = e.Hash
	}
	return m, nil
}

func isHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Check pins hash for name at first sight and reports whether hash matches
// the pin. A mismatch is remembered as pending until approved. For a file,
// the file is re-read first if it changed (another process may have pinned
// or approved), and a first-sight pin is written to it; err reports a
// failure to read or write the file, in which case ok is still the answer
// from the pins known (the last good read, plus this first sight in memory).
func (p *Pins) Check(name, hash string) (ok bool, err error) {
	oks, err := p.CheckAll(map[string]string{name: hash})
	return oks[name], err
}

// CheckAll is Check for many definitions at once (name → hash), as one
// server's tool list is: the file is re-read at most once, and every
// first-sight pin is written in one update of the file, however many
// there are. ok tells, for each name, whether its hash matches its pin.
func (p *Pins) CheckAll(defs map[string]string) (ok map[string]bool, err error) {
	return p.CheckMigrating(defs, nil)
}

// CheckMigrating is CheckAll where legacy maps a key of defs to the
// catalog name its tool had as a version 1 pin. A key not pinned yet
// whose legacy name is pinned takes that pin: the same hash is pinned
// under the key (migrated), a different one is held as pending, never
// trusted at first sight. The legacy entry stays: another server's tool
// of the same catalog name is judged against it too.
func (p *Pins) CheckMigrating(defs, legacy map[string]string) (ok map[string]bool, err error) {
	if p.Shared() {
		return p.checkShared(defs, legacy)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	if p.path != "" {
		_, err = p.reloadLocked()
	}
	ok = make(map[string]bool, len(defs))
	fresh := map[string]string{}
	for name, hash := range defs {
		old, known := p.hashes[name]
		migrate := false
		if ln, ok := legacy[name]; !known && ok && !strings.Contains(ln, "/") {
			old, known = p.hashes[ln]
			migrate = known
		}
		switch {
		case !known:
			fresh[name] = hash
		case old == hash && migrate:
			fresh[name] = hash
		case old == hash:
			delete(p.pending, name)
			ok[name] = true
		default:
			p.pending[name] = hash
			ok[name] = false
		}
	}
	if len(fresh) == 0 {
		return ok, err
	}
	if p.path == "" || p.readOnly {
		for name, hash := range fresh {
			p.hashes[name] = hash
			ok[name] = true
		}
		return ok, err
	}
	cur := map[string]string{}
	werr := p.updateLocked(func(m map[string]string) bool {
		added := false
		for name, hash := range fresh {
			if h, had := m[name]; had { // pinned by another process meanwhile
				cur[name] = h
				continue
			}
			m[name] = hash
			added = true
		}
		return added
	})
	for name, hash := range fresh {
		if werr != nil {
			p.hashes[name] = hash // trusted for this process only
			ok[name] = true
			continue
		}
		if h, had := cur[name]; had && h != hash {
			p.pending[name] = hash
			ok[name] = false
			continue
		}
		delete(p.pending, name)
		ok[name] = true
	}
	if werr != nil {
		return ok, werr
	}
	return ok, err
}

// Pending returns the tools whose definitions changed and await approval,
// sorted.
func (p *Pins) Pending() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.pending))
	for n := range p.pending {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Hash returns the pinned hash of name.
func (p *Pins) Hash(name string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.hashes[name]
	return h, ok
}

// PinOf returns the pin of server's tool: its own (PinKey), else the
// version 1 pin of its catalog name, as CheckMigrating judges it.
func (p *Pins) PinOf(server, tool, catalogName string) (string, bool) {
	if h, ok := p.Hash(PinKey(server, tool)); ok {
		return h, true
	}
	return p.Hash(catalogName)
}

// Approve accepts the pending changed definition of name: it becomes the
// pin (written to the file, if any), and the next refresh adds the tool
// again. It reports whether a change was pending.
func (p *Pins) Approve(name string) (bool, error) {
	p.mu.Lock()
	h, ok := p.pending[name]
	p.mu.Unlock()
	if !ok {
		return false, nil
	}
	if _, err := p.Pin(name, h); err != nil {
		return false, err
	}
	return true, nil
}

// Pin records hash as the approved definition of name, whatever was pinned
// before, and returns the previous pin ("" if none). For a file, it is
// written before Pin returns; read-only pins refuse.
func (p *Pins) Pin(name, hash string) (old string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if (p.path != "" || p.shared != nil) && !isHexHash(hash) {
		return "", fmt.Errorf("upstream: pin %q: hash %q is not a SHA-256 in hex", name, hash)
	}
	p.init()
	if p.readOnly {
		return "", errors.New("upstream: pins opened read-only")
	}
	old = p.hashes[name]
	switch {
	case p.shared != nil:
		old, err = p.pinSharedLocked(name, hash)
	case p.path != "":
		err = p.updateLocked(func(m map[string]string) bool {
			old = m[name]
			m[name] = hash
			return old != hash
		})
	}
	if err != nil {
		return "", err
	}
	p.hashes[name] = hash
	if p.pending[name] == hash {
		delete(p.pending, name)
	}
	return old, nil
}

// Reload re-reads the pin file if it changed on disk and reports whether
// any pin changed since the last Reload, counting changes that a Check or
// Pin read from the file first. Pins in memory only never change this way.
// On an error the pins known are kept.
func (p *Pins) Reload() (changed bool, err error) {
	if p.Shared() {
		return p.reloadShared()
	}
	if p.path == "" {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	if _, err := p.reloadLocked(); err != nil {
		return false, err
	}
	changed, p.unseen = p.unseen, false
	return changed, nil
}

func (p *Pins) reloadLocked() (bool, error) {
	fi, err := os.Stat(p.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !p.stamp.exists {
			return false, nil
		}
	case err != nil:
		return false, fmt.Errorf("%w: %s: %v", ErrPinFile, p.path, err)
	case p.stamp.exists && stampOf(fi).same(p.stamp):
		return false, nil
	}
	m, st, err := readPinFile(p.path)
	if err != nil {
		return false, err
	}
	changed := len(m) != len(p.hashes)
	for k, v := range m {
		if p.hashes[k] != v {
			changed = true
		}
	}
	if !st.exists && len(p.hashes) > 0 {
		// The file was deleted: keep what this process trusts rather than
		// forgetting every pin (the next first sight rewrites the file).
		p.stamp = st
		return false, nil
	}
	p.hashes, p.stamp = m, st
	if changed {
		p.unseen = true
	}
	return changed, nil
}

// updateLocked re-reads the file under the file lock, lets f change the
// pins (f reports whether it did), writes them back atomically, and makes
// them this process's pins. p.mu is held.
func (p *Pins) updateLocked(f func(map[string]string) bool) error {
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrPinFile, err)
	}
	unlock, err := lockFile(p.path + ".lock")
	if err != nil {
		return fmt.Errorf("%w: locking %s: %v", ErrPinFile, p.path, err)
	}
	defer unlock()
	m, st, err := readPinFile(p.path)
	if err != nil {
		return err
	}
	if !st.exists {
		// Deleted (or never written): keep what this process trusts, as
		// reloadLocked does, rather than forgetting every other pin.
		for k, v := range p.hashes {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
	}
	if !sameHashes(m, p.hashes) {
		p.unseen = true // another process changed a pin
	}
	if f(m) || (!st.exists && len(m) > 0) {
		if err := writePinFile(p.path, m); err != nil {
			return err
		}
	}
	fi, err := os.Stat(p.path)
	if err == nil {
		p.stamp = stampOf(fi)
	}
	p.hashes = m
	return nil
}

func sameHashes(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if h, ok := b[k]; !ok || h != v {
			return false
		}
	}
	return true
}

// writePinFile writes m to path atomically with mode 0600.
func writePinFile(path string, m map[string]string) error {
	pf := pinFile{Version: pinFileVersion, Tools: make(map[string]pinEntry, len(m))}
	now := time.Now().UTC().Format(time.RFC3339)
	old, _, _ := readPinEntries(path)
	for name, h := range m {
		e := pinEntry{Hash: h, Pinned: now}
		if o, ok := old[name]; ok && o.Hash == h {
			e.Pinned = o.Pinned
		}
		pf.Tools[name] = e
	}
	b, err := json.MarshalIndent(pf, "", "  ")
	if err != nil {
		return err
	}
	if err := projfile.WriteAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("%w: %v", ErrPinFile, err)
	}
	return nil
}

// readPinEntries returns the raw entries of a pin file, to keep the times
// of unchanged pins.
func readPinEntries(path string) (map[string]pinEntry, bool, error) {
	b, err := projfile.Read(path, maxPinFileBytes, "")
	if err != nil {
		return nil, false, err
	}
	var pf pinFile
	if err := json.Unmarshal(b, &pf); err != nil {
		return nil, false, err
	}
	return pf.Tools, true, nil
}
