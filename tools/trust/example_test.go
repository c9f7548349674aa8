package trust_test

import (
	"fmt"
	"os"

	"github.com/sandcall/sandcall/tools/trust"
)

// A person trusts a project's script; a later edit is a different hash.
func Example() {
	state, _ := os.MkdirTemp("", "state-")
	project, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(state)
	defer os.RemoveAll(project)

	p, _ := trust.OpenIn(state, project)
	p.SetScripts(map[string]string{".agents/tools/branch": "3f1a…"})
	_ = p.Save()

	again, _ := trust.OpenIn(state, project)
	h, ok := again.Script(".agents/tools/branch")
	fmt.Println(h, ok, h == "9c0d…")
	// Output:
	// 3f1a… true false
}
