package bindings

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/sandcall/sandcall/sandbox"
)

// keepBytes reads a RunnerConfig.Keep… field: 0 (unset) or over most
// means most; negative means nothing is kept.
func keepBytes(n, most int) int {
	switch {
	case n == 0 || n > most:
		return most
	case n < 0:
		return 0
	}
	return n
}

// cutResult replaces a result over its budget of max bytes with its first
// page: a JSON string holding the longest prefix of its compact JSON (cut
// at a character boundary) whose encoding fits in max bytes. The whole
// result moves to res.Whole.
func cutResult(res *sandbox.Result, max int) {
	whole := res.Result
	n := prefixFitting(whole, max)
	page, _ := marshalString(whole[:n])
	for len(page) > max && n > 0 { // prefixFitting's count is exact; this is a guard
		n = utf8Floor(whole, n*9/10)
		page, _ = marshalString(whole[:n])
	}
	res.Whole = whole
	res.Result = page
	res.Truncated = true
	res.OutputBytes = len(whole)
	res.OutputNextOffset = n
}

// cutLogs cuts logs over their budget of max bytes as the engines do
// (entries that fit, then the start of the next one at a character
// boundary) and keeps the whole output, one entry per line, in
// res.WholeLogs.
func cutLogs(res *sandbox.Result, max int) {
	total := 0
	for _, e := range res.Logs {
		total += logCost(e)
	}
	if total <= max {
		return
	}
	var kept []string
	used := 0
	for _, e := range res.Logs {
		if used+logCost(e) <= max {
			kept = append(kept, e)
			used += logCost(e)
			continue
		}
		if room := max - used; room > 0 {
			kept = append(kept, e[:utf8Floor([]byte(e), room)])
		}
		break
	}
	whole := strings.Join(res.Logs, "\n")
	res.WholeLogs = []byte(whole)
	res.LogsBytes = len(whole)
	res.LogsNextOffset = len(strings.Join(kept, "\n"))
	res.Logs = kept
	res.Truncated = true
}

// logCost is what a log entry takes from the log budget: its bytes, and at
// least one, as in the engines, so that a flood of empty entries is cut too.
func logCost(e string) int { return max(len(e), 1) }

// prefixFitting returns the length of the longest prefix of b, ending at a
// character boundary, whose JSON string encoding (quotes included, no HTML
// escaping) takes at most max bytes.
func prefixFitting(b []byte, max int) int {
	size := 2 // the quotes
	i := 0
	for i < len(b) {
		c, w := utf8.DecodeRune(b[i:])
		var enc int
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			enc = 2
		case c < 0x20 || c == 0x2028 || c == 0x2029 || (c == utf8.RuneError && w == 1):
			enc = 6
		default:
			enc = w
		}
		if size+enc > max {
			break
		}
		size += enc
		i += w
	}
	return i
}

// utf8Floor moves n back to the start of a character of b.
func utf8Floor(b []byte, n int) int {
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// marshalString is the JSON string encoding of b, without HTML escaping.
func marshalString(b []byte) (json.RawMessage, error) { return sandbox.MarshalJSON(string(b)) }
