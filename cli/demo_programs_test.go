package cli

import (
	"strings"
	"testing"
)

// TestDemoPrograms: `sandcall demo programs` shows the three parts and
// exits 0 (it checks each itself), in both tiers.
func TestDemoPrograms(t *testing.T) {
	t.Parallel()
	for _, tier := range []string{"inprocess", "process"} {
		t.Run(tier, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := sandcallIn(t, t.TempDir(), nil, "demo", "programs", "--isolation", tier)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			for _, want := range []string{
				"It names get_team_members (line 6), get_budget_by_level (line 8), get_expenses (line 11).",
				"It saves the program overrun_count (version ",
				"overrun_count({quarter: \"Q3\"}), called directly: 16",
				"E_TOOL_DENIED: the policy refuses this program before it runs",
				"calls made: 0",
				`run 2: {"new_tickets":[],"triaged_so_far":3}`,
				"E_TOOL_DENIED by rule no-exfiltration",
				"data flow: state:triaged",
			} {
				if !strings.Contains(stdout, want) {
					t.Errorf("the demo's output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}
