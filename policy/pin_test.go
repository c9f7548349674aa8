package policy

import "testing"

func TestPinned(t *testing.T) {
	c := mustParse(t, `version: 1
rules:
  - tools: [send_payment]
    allowed_callers: [direct]
    pin: true
  - tools: ["github_*"]
    match: {read_only: true}
    pin: true
  - tools: ["github_*"]
`)
	cases := []struct {
		tool string
		meta ToolMeta
		want bool
	}{
		{"send_payment", ToolMeta{}, true},
		{"github_list_issues", ToolMeta{ReadOnly: true}, true},
		{"github_delete_repo", ToolMeta{Destructive: true}, false}, // the third rule selects it
		{"other", ToolMeta{}, false},
	}
	for _, tc := range cases {
		if got := c.Pinned(tc.tool, tc.meta); got != tc.want {
			t.Errorf("Pinned(%s) = %v, want %v", tc.tool, got, tc.want)
		}
	}
	if Default().Pinned("send_payment", ToolMeta{}) {
		t.Error("the default policy pins a tool")
	}
	if _, err := Parse("p.yaml", []byte("version: 1\nrules:\n  - tools: [x]\n    pin: yes please\n")); err == nil {
		t.Error("pin that is not a boolean accepted")
	}
}
