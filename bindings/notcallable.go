package bindings

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// Calls to a name that is not a tool the caller may call.
//
// A program may write tools.X(args) for any X: a name it is not bound
// (unknown, misspelt, removed, disabled, denied to code) is not a
// TypeError but a call that reaches the broker and fails with a ToolError
// whose hint names the way out: the closest tools ("did you mean"), the
// rule that denies it, or the command an operator runs to re-enable it.
// `'name' in tools` tests for a tool. WebAssembly guests call by name and
// get the same errors.

// maxKnownNames caps the names the broker remembers to tell a removed tool
// from one that never was.
const maxKnownNames = 1 << 14

// Unavailability says why a name the catalog lacks is not callable, when a
// tool source knows (for example an upstream tool disabled because its
// definition changed since it was approved).
type Unavailability struct {
	// Message says what happened, e.g. "tool github_create_issue is
	// disabled: its definition changed since it was approved".
	Message string
	// Hint says what can be done about it, by whom.
	Hint string
	// Rule names the cause in the audit trail, e.g. "upstream.pin_changed".
	Rule string
	// Code is the error's code; if empty, E_TOOL_DENIED (E_TOOL_FAILED,
	// say, for a server that failed to start).
	Code sandbox.Code
}

// known remembers the names the catalog held, to say "removed".
type known struct {
	mu      sync.Mutex // guards names, why and pending
	names   map[string]bool
	why     func(name string) (Unavailability, bool)
	pending func(ctx context.Context, name string) bool
	notes   func() []string
}

// watchNames records the catalog's names now and after every change.
func (b *Broker) watchNames() {
	note := func() {
		ts := b.cfg.Catalog.List()
		b.known.mu.Lock()
		defer b.known.mu.Unlock()
		if b.known.names == nil {
			b.known.names = map[string]bool{}
		}
		for _, t := range ts {
			if len(b.known.names) >= maxKnownNames {
				return
			}
			b.known.names[t.Name] = true
		}
	}
	note()
	b.cfg.Catalog.OnChange(note)
}

// SetUnavailable registers f, asked for a called name the catalog lacks: if
// it knows why the tool is unavailable, the call fails with E_TOOL_DENIED,
// f's message and hint. Upstream servers register their disabled tools
// this way. A nil f removes it.
func (b *Broker) SetUnavailable(f func(name string) (Unavailability, bool)) {
	b.known.mu.Lock()
	b.known.why = f
	b.known.mu.Unlock()
}

// SetPending registers f, asked first for a called name the catalog
// lacks: when the tool's source is still starting (an upstream server
// coming up), f waits for it, until ctx ends, and returns true; the name
// is then looked up again. Upstream servers register their start-up this
// way, so that a call made right after start is not told the tool does
// not exist. A nil f removes it.
func (b *Broker) SetPending(f func(ctx context.Context, name string) bool) {
	b.known.mu.Lock()
	b.known.pending = f
	b.known.mu.Unlock()
}

// SetNotes registers f, which says, one sentence each, which tool sources
// are not available now (an upstream server still starting, failed, or
// not trusted): search_tools adds them to its hint, so that a model that
// finds nothing knows why. A nil f removes it.
func (b *Broker) SetNotes(f func() []string) {
	b.known.mu.Lock()
	b.known.notes = f
	b.known.mu.Unlock()
}

// sourceNotes asks the notes hook.
func (b *Broker) sourceNotes() []string {
	b.known.mu.Lock()
	f := b.known.notes
	b.known.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// waitPending asks the pending hook about name.
func (b *Broker) waitPending(ctx context.Context, name string) bool {
	b.known.mu.Lock()
	f := b.known.pending
	b.known.mu.Unlock()
	return f != nil && f(ctx, name)
}

// missingTool is the error of a call to name, which the catalog lacks, by
// caller for p.
func (b *Broker) missingTool(name string, caller tools.Caller, p Principal) *sandbox.Error {
	b.known.mu.Lock()
	why, wasKnown := b.known.why, b.known.names[name]
	b.known.mu.Unlock()
	if why != nil {
		if u, ok := why(name); ok {
			code := u.Code
			if code == "" {
				code = sandbox.EToolDenied
			}
			return &sandbox.Error{Code: code, Tool: safeName(name), Rule: u.Rule,
				Message: sandbox.Cap(u.Message, sandbox.MaxMessageBytes), Hint: sandbox.Cap(u.Hint, sandbox.MaxMessageBytes)}
		}
	}
	e := unknownTool(name)
	if wasKnown {
		e.Message = fmt.Sprintf("tool %q was removed from the catalog (its server or script no longer provides it)", safeName(name))
	}
	e.Hint = b.unknownHintFor(name, caller, p)
	return e
}

// unknownHintFor is the hint of a call to name, which caller may not call
// for p: the closest names it may call.
func (b *Broker) unknownHintFor(name string, caller tools.Caller, p Principal) string {
	var names []string
	for _, t := range b.Exposed(caller, p) {
		if !IsDiscovery(t.Name) {
			names = append(names, t.Name)
		}
	}
	return unknownHint(Closest(name, names, 3), caller)
}

// unknownHint is the hint of a call to a tool that is not there.
func unknownHint(close []string, caller tools.Caller) string {
	var b strings.Builder
	if len(close) > 0 {
		b.WriteString("Did you mean ")
		for i, n := range close {
			if i > 0 {
				b.WriteString(map[bool]string{true: " or ", false: ", "}[i == len(close)-1])
			}
			if caller == tools.Code {
				b.WriteString("tools." + n)
			} else {
				b.WriteString(n)
			}
		}
		b.WriteString("? ")
	}
	if caller == tools.Code {
		b.WriteString("Test for a tool with 'name' in tools; find tools with await tools.$search(\"what to do\") or search_tools.")
	} else {
		b.WriteString("Find the tool's exact name with search_tools.")
	}
	return b.String()
}

// Closest returns up to n of names closest to name: the same words in
// another case or separator (createIssue, create-issue), a name with or
// without a server prefix (create_issue for github_create_issue), then
// small misspellings (edit distance up to a quarter of the name) and
// names sharing most words. Best first; none when nothing is close.
func Closest(name string, names []string, n int) []string {
	key := nameKey(name)
	if key == "" || n <= 0 {
		return nil
	}
	words := nameWords(name)
	type cand struct {
		name  string
		score float64 // lower is closer
	}
	var cs []cand
	maxDist := max(1, len(key)/4)
	for _, c := range names {
		ck := nameKey(c)
		var s float64
		switch {
		case ck == key:
			s = 0
		case strings.HasSuffix(ck, key) && len(key) >= 4, strings.HasSuffix(key, ck) && len(ck) >= 4:
			s = 1
		default:
			d := editDistance(key, ck, maxDist)
			if d <= maxDist {
				s = 1 + float64(d)
				break
			}
			shared := sharedWords(words, nameWords(c))
			if shared == 0 || float64(shared) < 0.6*float64(max(len(words), 1)) {
				continue
			}
			s = 10 - float64(shared) + float64(len(c))/1000
		}
		cs = append(cs, cand{c, s})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score < cs[j].score
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// nameKey is name lower-cased without separators: createIssue,
// create_issue and create-issue meet.
func nameKey(name string) string {
	name = strings.TrimPrefix(name, "tools.")
	var b strings.Builder
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// nameWords splits a name at separators and camelCase, lower-cased.
func nameWords(name string) map[string]bool {
	out := map[string]bool{}
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out[strings.ToLower(string(cur))] = true
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return out
}

func sharedWords(a, b map[string]bool) int {
	n := 0
	for w := range a {
		if b[w] {
			n++
		}
	}
	return n
}

// editDistance is the Levenshtein distance of a and b with adjacent
// transpositions, or limit+1 once it must exceed limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	if len(a) > 128 || len(b) > 128 {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
