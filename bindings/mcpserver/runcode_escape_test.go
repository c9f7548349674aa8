package mcpserver_test

import (
	"strings"
	"testing"
)

// TestResultTextKeepsHTMLCharacters: the text a model reads holds <, > and
// & as they are, not as six-byte \u003c escapes, so a result (or a page of
// one) of HTML-like text costs what the result budget says, not up to six
// times more. The first result is under the 256 KiB budget; the second is
// cut, and its first page and a read_output page stay near their sizes.
func TestResultTextKeepsHTMLCharacters(t *testing.T) {
	h := newHarness(t, options{})
	res := h.call(t, "run_code", map[string]any{"code": `return "<a&b>".repeat(40000)`}) // 200 KB
	if text := textJSON(t, res); len(text) > 210<<10 || strings.Contains(string(text), `\u003c`) {
		t.Errorf("a 200 KB result is %d bytes of text (escaped: %v)", len(text), strings.Contains(string(text), `\u003c`))
	}
	res = h.call(t, "run_code", map[string]any{"code": `return "<a&b>".repeat(100000)`}) // 500 KB
	r := decodeStructured[longResult](t, res)
	if !r.Truncated || r.OutputRef == "" {
		t.Fatalf("truncated %v, ref %q", r.Truncated, r.OutputRef)
	}
	if text := textJSON(t, res); len(text) > 270<<10 {
		t.Errorf("the first page of a cut result is %d bytes of text; the budget is 256 KiB", len(text))
	}
	p := h.call(t, "read_output", map[string]any{"ref": r.OutputRef, "offset": r.OutputNextOffset, "limit": 65536})
	if text := textJSON(t, p); len(text) > 66<<10 {
		t.Errorf("a 64 KiB page is %d bytes of text", len(text))
	}
}
