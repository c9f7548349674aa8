package tools_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sandcall/sandcall/tools"
)

func ExampleVisible() {
	fmt.Println(tools.Visible("pay \u202E0001 DSU\u202C to\u200Bbob"))
	// Output: pay \u202E0001 DSU\u202C to\u200Bbob
}

// TestVisibleKeepsJSON: escaping inside a JSON string keeps it valid JSON of
// the same value, astral format characters included.
func TestVisibleKeepsJSON(t *testing.T) {
	for _, s := range []string{"a\u202Eb", "tag\U000E0041", "x\u2028y\x7fz", "plain", "tab\tnew\nline", "\u00adsoft"} {
		raw, _ := json.Marshal(s)
		esc := tools.Visible(string(raw))
		var back string
		if err := json.Unmarshal([]byte(esc), &back); err != nil || back != s {
			t.Errorf("%q: escaped %s decodes to %q, %v", s, esc, back, err)
		}
	}
}
