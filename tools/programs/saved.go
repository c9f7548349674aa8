package programs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/plan"
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools"
)

// SaveToolName is the tool a model saves programs with.
const SaveToolName = "save_program"

// savedNS is the store.Space namespace of saved programs: one key per
// program name, and genKey, which changes at every save so that replicas
// sharing the store notice.
const (
	savedNS = "programs"
	genKey  = ".gen"
)

// Bounds of saved programs (docs/limits.md).
const (
	DefaultMaxSaved      = 100     // per principal
	DefaultMaxSavedTotal = 1000    // in the store
	MaxDescriptionBytes  = 4 << 10 // a saved program's description
	MaxSchemaBytes       = 16 << 10
)

// SavedConfig says where saved programs are kept. The zero value of every
// field but Store is usable.
type SavedConfig struct {
	// Store keeps the programs (Redis: every replica sees each save).
	// Required.
	Store store.Space
	// MaxPerPrincipal caps the programs one principal keeps; if zero,
	// DefaultMaxSaved. MaxTotal caps them all; if zero,
	// DefaultMaxSavedTotal.
	MaxPerPrincipal, MaxTotal int
	// Reserved, if set, says why a program may not take a name ("" if it
	// may), beside the names the catalog already holds.
	Reserved func(name string) string
	// Logger receives what syncing finds (a record that no longer loads).
	// If nil, nothing is logged.
	Logger *slog.Logger
}

// Saved is the saved programs of a store, kept in step with a catalog. It
// is safe for concurrent use.
type Saved struct {
	cfg SavedConfig
	reg *Registry

	mu    sync.Mutex
	cat   *tools.Catalog
	gen   string
	byKey map[string]savedEntry // by name
}

type savedEntry struct {
	sum  [sha256.Size]byte // of the record as stored
	tool *tools.Tool       // nil when the record did not load
}

// record is a saved program as stored.
type record struct {
	Name        string          `json:"name"`
	Owner       string          `json:"owner"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Code        string          `json:"code"`
	Language    string          `json:"language"`
	ReadOnly    bool            `json:"read_only,omitempty"`
	Destructive bool            `json:"destructive,omitempty"`
	Idempotent  bool            `json:"idempotent,omitempty"`
	SHA256      string          `json:"sha256"`
	SavedAt     time.Time       `json:"saved_at"`
}

// NewSaved returns the saved programs of cfg.Store, registered in reg.
// Call AddTo, then Sync or Watch, to bring them into a catalog.
func NewSaved(reg *Registry, cfg SavedConfig) *Saved {
	if cfg.MaxPerPrincipal <= 0 {
		cfg.MaxPerPrincipal = DefaultMaxSaved
	}
	if cfg.MaxTotal <= 0 {
		cfg.MaxTotal = DefaultMaxSavedTotal
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Saved{cfg: cfg, reg: reg, byKey: map[string]savedEntry{}}
}

// AddTo remembers cat: Sync and Save keep it in step with the store.
func (s *Saved) AddTo(cat *tools.Catalog) {
	s.mu.Lock()
	s.cat = cat
	s.mu.Unlock()
}

// Watch syncs every interval (a second if zero) until ctx ends.
func (s *Saved) Watch(ctx context.Context, interval time.Duration) {
	poll(ctx, interval, func() {
		if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("saved programs: the store is unavailable; retrying", "err", err)
		}
	})
}

// Sync brings the catalog in step with the store: programs saved (here
// or by another replica) since the last Sync are added or replaced, those
// deleted removed. It reads only the generation key when nothing changed.
func (s *Saved) Sync(ctx context.Context) error {
	gen, err := s.cfg.Store.SpaceGet(ctx, savedNS, genKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	s.mu.Lock()
	unchanged := string(gen) == s.gen && s.cat != nil
	s.mu.Unlock()
	if unchanged {
		return nil
	}
	names, err := s.cfg.Store.SpaceKeys(ctx, savedNS, "", 0)
	if err != nil {
		return err
	}
	recs := map[string]*record{}
	sums := map[string][sha256.Size]byte{}
	for _, n := range names {
		if n == genKey {
			continue
		}
		b, err := s.cfg.Store.SpaceGet(ctx, savedNS, n)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var r record
		if json.Unmarshal(b, &r) != nil || r.Name != n {
			s.cfg.Logger.Warn("saved programs: a record does not load", "name", n)
			continue
		}
		recs[n] = &r
		sums[n] = sha256.Sum256(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen = string(gen)
	for n, e := range s.byKey {
		if sum, ok := sums[n]; !ok || sum != e.sum {
			s.dropLocked(n, e)
		}
	}
	for n, r := range recs {
		if _, ok := s.byKey[n]; ok {
			continue
		}
		s.addLocked(r, sums[n])
	}
	return nil
}

// dropLocked removes the program n from the catalog and the Registry.
func (s *Saved) dropLocked(n string, e savedEntry) {
	if e.tool != nil {
		s.reg.forget(e.tool)
		if s.cat != nil {
			if t, ok := s.cat.Lookup(n); ok && t == e.tool {
				s.cat.Remove(n)
			}
		}
	}
	delete(s.byKey, n)
}

// addLocked makes r a tool in the catalog; a record that does not load
// (its name was taken since, its code no longer parses) is logged.
func (s *Saved) addLocked(r *record, sum [sha256.Size]byte) {
	p, err := r.program()
	var t *tools.Tool
	if err == nil {
		t, err = s.reg.tool(p)
	}
	if err == nil && s.cat != nil {
		if err = s.cat.Add(t); err != nil {
			s.reg.forget(t)
		}
	}
	if err != nil {
		s.cfg.Logger.Warn("saved program not loaded", "name", r.Name, "owner", r.Owner, "err", err.Error())
		s.byKey[r.Name] = savedEntry{sum: sum}
		return
	}
	s.byKey[r.Name] = savedEntry{sum: sum, tool: t}
}

// program is the Program of a record.
func (r *record) program() (*Program, error) {
	// JavaScript only: a saved program is a model's text, read by the
	// server (its plan, at the save and at each load), and TypeScript would
	// take esbuild, whose running time is not bounded (sandbox/ts), there.
	lang := sandbox.Language(r.Language)
	if lang != sandbox.JavaScript {
		return nil, fmt.Errorf("unknown language %q", r.Language)
	}
	p := &Program{Name: r.Name, Language: lang, Source: r.Code, InputSchema: r.Parameters,
		Origin: SourceSaved, Owner: r.Owner, SHA256: r.SHA256, SavedAt: r.SavedAt,
		Effects: tools.Effects{ReadOnly: r.ReadOnly, Destructive: r.Destructive, Idempotent: r.Idempotent, Declared: true}}
	if hashSource(lang, r.Code) != r.SHA256 {
		return nil, errors.New("the code does not match its hash")
	}
	pl, perr := planOf(lang, r.Code)
	if perr != nil {
		return nil, perr
	}
	p.Plan = pl
	p.Description = savedDescription(r.Description, p)
	return p, nil
}

// planOf is the plan of a program's text.
func planOf(lang sandbox.Language, src string) (sandbox.Plan, *sandbox.Error) {
	return plan.Of(sandbox.Program{Language: lang, Source: src}, nil)
}

// savedDescription is the description a saved program's tool shows: the
// model's, and what the program is and calls.
func savedDescription(desc string, p *Program) string {
	names := p.Plan.Names()
	calls := "it calls no tool by name"
	if len(names) > 0 {
		calls = "it calls " + strings.Join(names, ", ")
	}
	if p.Plan.Dynamic > 0 {
		calls += fmt.Sprintf(" (and %d names computed at run time)", p.Plan.Dynamic)
	}
	return fmt.Sprintf("%s\n\nA saved program (version %s): %s.", desc, p.Version(), calls)
}

// SaveRequest is save_program's arguments.
type SaveRequest struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Code        string          `json:"code"`
	Language    string          `json:"language,omitempty"`
	ReadOnly    bool            `json:"read_only,omitempty"`
	Destructive bool            `json:"destructive,omitempty"`
	Idempotent  bool            `json:"idempotent,omitempty"`
}

// SaveResult is save_program's result.
type SaveResult struct {
	Name    string       `json:"name"`
	Version string       `json:"version"`
	SHA256  string       `json:"sha256"`
	Plan    sandbox.Plan `json:"plan"`
	// Replaced is the version this save replaced, if any.
	Replaced string `json:"replaced,omitempty"`
	// Unchanged says the same version was saved already.
	Unchanged bool `json:"unchanged,omitempty"`
}

// closedObject is the parameter schema of a program that takes none.
var closedObject = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// Check validates a save request for owner and returns the record it
// would store: a name that is a tool name and not another tool's, a
// description, an object schema, code that parses within MaxSourceBytes.
// Errors are E_TOOL_ARGS naming the argument (E_SYNTAX for code that does
// not parse, at its line).
func (s *Saved) Check(owner string, req SaveRequest) (*record, *Program, *sandbox.Error) {
	bad := func(path, msg, hint string) *sandbox.Error {
		return &sandbox.Error{Code: sandbox.EToolArgs, Tool: SaveToolName, Path: path, Message: sandbox.Cap(msg, sandbox.MaxMessageBytes), Hint: hint}
	}
	if !toolName().MatchString(req.Name) {
		return nil, nil, bad("/name", "the name must be a tool name: a letter or _, then letters, digits or _, at most 64",
			"Name the program like a tool, e.g. weekly_expense_report.")
	}
	if why := s.taken(owner, req.Name); why != "" {
		return nil, nil, bad("/name", why, "Choose another name.")
	}
	desc := strings.TrimSpace(tools.Visible(strings.ToValidUTF8(req.Description, "\uFFFD")))
	if desc == "" || len(desc) > MaxDescriptionBytes {
		return nil, nil, bad("/description", fmt.Sprintf("the description must say what the program answers, in 1 to %d bytes", MaxDescriptionBytes),
			"Say what question the program answers and when to use it.")
	}
	params := bytes.TrimSpace(req.Parameters)
	if len(params) == 0 || string(params) == "null" {
		params = closedObject
	}
	if len(params) > MaxSchemaBytes {
		return nil, nil, bad("/parameters", fmt.Sprintf("the parameter schema is over %d bytes", MaxSchemaBytes), "Describe fewer, simpler parameters.")
	}
	var top struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(params, &top) != nil || top.Type != "object" {
		return nil, nil, bad("/parameters", "parameters must be a JSON Schema of type object (the program's args)",
			`Pass {"type":"object","properties":{"quarter":{"type":"string"}},"required":["quarter"]}, or omit it for none.`)
	}
	schema, err := tools.ParseSchema(params)
	if err == nil {
		_, err = tools.NewCatalog(&tools.Tool{Name: "x", InputSchema: schema, Handler: noop})
	}
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "input schema: "); i >= 0 {
			msg = msg[i+len("input schema: "):]
		}
		return nil, nil, bad("/parameters", "the parameter schema cannot be used: "+msg,
			"Use plain JSON Schema keywords (type, properties, required, enum, items).")
	}
	lang := sandbox.JavaScript
	switch req.Language {
	case "", "javascript", "js":
	default:
		e := bad("/language", "a saved program is JavaScript", "Strip the types and save it as JavaScript (omit language).")
		e.AllowedValues = []any{"javascript"}
		return nil, nil, e
	}
	if strings.TrimSpace(req.Code) == "" {
		return nil, nil, bad("/code", "code is required", "Send the program: the body of an async function that reads args and returns the result.")
	}
	if len(req.Code) > MaxSourceBytes || !utf8.ValidString(req.Code) {
		return nil, nil, bad("/code", fmt.Sprintf("the code must be UTF-8 text of at most %d bytes", MaxSourceBytes), "Send a shorter program.")
	}
	if req.ReadOnly && req.Destructive {
		return nil, nil, bad("/read_only", "read_only and destructive contradict each other", "Keep one.")
	}
	r := &record{Name: req.Name, Owner: owner, Description: desc, Parameters: params, Code: req.Code,
		Language: string(lang), ReadOnly: req.ReadOnly, Destructive: req.Destructive, Idempotent: req.Idempotent,
		SHA256: hashSource(lang, req.Code)}
	p, perr := r.program()
	if perr != nil {
		err := perr
		var se *sandbox.Error
		if errors.As(err, &se) {
			e := *se
			e.Tool, e.Path = SaveToolName, "/code"
			return nil, nil, &e
		}
		return nil, nil, bad("/code", err.Error(), "")
	}
	return r, p, nil
}

func noop(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }

// taken says why owner may not save a program named name: another tool
// has it (a saved program of owner's is replaced).
func (s *Saved) taken(owner, name string) string {
	if name == SaveToolName {
		return "the name " + name + " is taken"
	}
	if s.cfg.Reserved != nil {
		if why := s.cfg.Reserved(name); why != "" {
			return "the name " + name + " is taken"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cat == nil {
		return ""
	}
	t, ok := s.cat.Lookup(name)
	if !ok {
		if _, _, alias := s.cat.Resolve(name); alias {
			return "the name " + name + " is taken"
		}
		return ""
	}
	if p, ok := s.reg.Of(t); ok && p.Origin == SourceSaved && p.Owner == owner {
		return ""
	}
	return "the name " + name + " is taken"
}

// Save stores the program of req for owner (after Check), replacing
// owner's program of the same name, and brings it into the catalog.
func (s *Saved) Save(ctx context.Context, owner string, req SaveRequest) (SaveResult, error) {
	r, p, e := s.Check(owner, req)
	if e != nil {
		return SaveResult{}, e
	}
	res := SaveResult{Name: r.Name, Version: p.Version(), SHA256: r.SHA256, Plan: p.Plan}
	old, err := s.cfg.Store.SpaceGet(ctx, savedNS, r.Name)
	switch {
	case err == nil:
		var o record
		if json.Unmarshal(old, &o) == nil {
			if o.Owner != owner {
				return SaveResult{}, &sandbox.Error{Code: sandbox.EToolArgs, Tool: SaveToolName, Path: "/name",
					Message: "the name " + r.Name + " is taken", Hint: "Choose another name."}
			}
			if o.SHA256 == r.SHA256 {
				res.Unchanged = true
			} else {
				res.Replaced = (&Program{SHA256: o.SHA256}).Version()
			}
		}
	case !errors.Is(err, store.ErrNotFound):
		return SaveResult{}, unavailable()
	default:
		if s.count(owner) >= s.cfg.MaxPerPrincipal {
			return SaveResult{}, &sandbox.Error{Code: sandbox.EToolFailed, Tool: SaveToolName,
				Message: fmt.Sprintf("you keep %d saved programs, the most allowed", s.cfg.MaxPerPrincipal),
				Hint:    "Save the program under the name of one you no longer need (it is replaced)."}
		}
	}
	r.SavedAt = time.Now().UTC()
	b, _ := json.Marshal(r)
	err = s.cfg.Store.SpacePut(ctx, savedNS, r.Name, b, 0, store.Quota{MaxKeys: s.cfg.MaxTotal + 1})
	if errors.Is(err, store.ErrQuota) {
		return SaveResult{}, &sandbox.Error{Code: sandbox.EToolFailed, Tool: SaveToolName,
			Message: fmt.Sprintf("the server keeps %d saved programs, the most allowed", s.cfg.MaxTotal),
			Hint:    "Save the program under the name of one you no longer need (it is replaced), or ask the operator."}
	}
	if err != nil {
		return SaveResult{}, unavailable()
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	if err := s.cfg.Store.SpacePut(ctx, savedNS, genKey, []byte(hex.EncodeToString(nonce[:])), 0, store.Quota{}); err != nil {
		return SaveResult{}, unavailable()
	}
	if err := s.Sync(ctx); err != nil {
		return SaveResult{}, unavailable()
	}
	return res, nil
}

// count is how many programs owner keeps.
func (s *Saved) count(owner string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.byKey {
		if e.tool == nil {
			continue
		}
		if p, ok := s.reg.Of(e.tool); ok && p.Owner == owner {
			n++
		}
	}
	return n
}

func unavailable() *sandbox.Error {
	return &sandbox.Error{Code: sandbox.EInternal, Tool: SaveToolName,
		Message: "the store of saved programs is unavailable, so the program was not saved",
		Hint:    "Retry in a few seconds; if it persists, the operator should check the store (store: in sandcall.yaml)."}
}
