package bindings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// The arguments as a person approving a call reads them (ApprovalRequest):
// one line per top-level argument, in the order the call gave them —
// "name: value", the value compact JSON with secrets redacted and
// invisible characters escaped. Every name is shown (up to maxShownArgs);
// the values share MaxArgsSummaryBytes, and a value longer than its share
// is cut on its own, saying how much of it is shown, so that one padded
// argument cannot push another out of the prompt.
const (
	// maxShownArgs caps the arguments listed; more are counted.
	maxShownArgs = 100
	// maxArgNameBytes caps an argument's name as shown.
	maxArgNameBytes = 64
	// minValueBytes is the least of a value shown when values are cut.
	minValueBytes = 32
)

// argsSummary is the summary of args for a person to read.
func argsSummary(args json.RawMessage) string {
	names, ok := argKeys(args)
	red := tools.RedactJSON(args)
	var vals map[string]json.RawMessage
	if !ok || json.Unmarshal(red, &vals) != nil {
		return sandbox.Cap(tools.Visible(string(red)), MaxArgsSummaryBytes)
	}
	if len(names) == 0 {
		return "(none)"
	}
	more := 0
	if len(names) > maxShownArgs {
		more = len(names) - maxShownArgs
		names = names[:maxShownArgs]
	}
	shown := make([]string, len(names))
	sizes := make([]int, len(names))
	for i, n := range names {
		var c bytes.Buffer
		if json.Compact(&c, vals[n]) != nil {
			c.Reset()
			c.Write(vals[n])
		}
		shown[i] = tools.Visible(c.String())
		sizes[i] = len(shown[i])
	}
	share := valueShares(sizes, MaxArgsSummaryBytes)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %s: ", argName(n))
		v := shown[i]
		if len(v) <= share[i] {
			b.WriteString(v)
			continue
		}
		n := share[i]
		for n > 0 && !utf8.RuneStart(v[n]) {
			n-- // not in the middle of a character
		}
		cut := v[:n]
		fmt.Fprintf(&b, "%s… (cut: %d of %d bytes shown)", cut, len(cut), len(v))
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n  … and %d more arguments, not shown (this call has %d)", more, more+len(names))
	}
	return b.String()
}

// argName is an argument's name as shown: bare when it is a plain
// identifier, else quoted as a JSON string (so that a name cannot pass for
// a line of its own or another argument), capped.
func argName(n string) string {
	n = sandbox.Cap(n, maxArgNameBytes)
	plain := n != ""
	for _, r := range n {
		if !(r == '_' || r == '-' || r == '.' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return n
	}
	q, _ := json.Marshal(n)
	return tools.Visible(string(q))
}

// valueShares splits budget among values of the given sizes: a value that
// fits in an even share keeps its size and leaves the rest to the others
// (water filling); each share is at least minValueBytes.
func valueShares(sizes []int, budget int) []int {
	share := make([]int, len(sizes))
	order := make([]int, len(sizes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return sizes[a] - sizes[b] })
	left := budget
	for k, i := range order {
		fair := max(left/(len(order)-k), minValueBytes)
		share[i] = min(sizes[i], fair)
		left -= share[i]
	}
	return share
}

// argKeys returns the keys of the JSON object args in their order
// (first occurrence), or false when args is not an object.
func argKeys(args json.RawMessage) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := tok.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
	}
	return keys, true
}
