package tsdecl

import (
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
)

// TestUpstreamReturnsDocumented: the declaration of an upstream tool
// without an output schema says what a program gets, content blocks
// included; a tool with an output schema does not carry the note.
func TestUpstreamReturnsDocumented(t *testing.T) {
	up := &tools.Tool{Name: "everything_get_tiny_image", Description: "Returns a tiny image.", DirectRaw: true}
	d := Declaration(up)
	for _, want := range []string{"@returns", `type: "image" | "audio"`, `type: "resource_link"; uri: string; name: string`} {
		if !strings.Contains(d, want) {
			t.Errorf("declaration lacks %q:\n%s", want, d)
		}
	}
	local := &tools.Tool{Name: "ping", Description: "Pings."}
	if strings.Contains(Declaration(local), "resource_link") {
		t.Errorf("a non-upstream tool carries the content note")
	}
}
