package cli

import (
	"strings"
	"testing"
)

// TestTaskRequiredToolLeftOut: the npm "everything" server lists
// simulate-research-query with execution.taskSupport "required" (a tool
// that can only be called as a task, which sandcall does not do): `tools
// list` leaves it out and says why; the server's other tools are listed.
func TestTaskRequiredToolLeftOut(t *testing.T) {
	t.Parallel()
	dir := everythingProject(t)
	if _, errOut, code := sandcallIn(t, dir, nil, "servers", "trust"); code != 0 {
		t.Fatalf("servers trust: exit %d\n%s", code, errOut)
	}
	out, errOut, code := sandcallIn(t, dir, nil, "tools", "list")
	if code != 0 {
		t.Fatalf("tools list: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "everything_simulate_research_query") {
		t.Errorf("the task-only tool is listed:\n%s", out)
	}
	if !strings.Contains(out, "everything_echo") {
		t.Errorf("the server's other tools are missing:\n%s\n%s", out, errOut)
	}
	want := `tool "simulate-research-query" is left out: it requires task augmentation (execution.taskSupport "required")`
	if !strings.Contains(errOut, want) {
		t.Errorf("tools list does not say why the tool is left out (want %q):\n%s", want, errOut)
	}
}
