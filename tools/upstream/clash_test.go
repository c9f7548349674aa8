package upstream

import (
	"strings"
	"testing"
)

// TestNameClashDeterministic: servers "a-b" and "a_b" both have a tool
// whose catalog name is a_b_echo. Whichever comes up first (the test
// orders them with gates), "a-b" (its name sorts first) has the name, and
// "a_b"'s tool is reported as a clash: not as a changed definition, and
// not disabled.
func TestNameClashDeterministic(t *testing.T) {
	for _, first := range []string{"a-b", "a_b"} {
		t.Run(first+" first", func(t *testing.T) {
			gates := map[string]chan struct{}{"a-b": make(chan struct{}), "a_b": make(chan struct{})}
			root := t.TempDir()
			writeServers(t, root, map[string]string{
				"a-b": gatedUpstream(t, namedEcho("echo", "Echoes a message (server a-b)."), gates["a-b"]),
				"a_b": gatedUpstream(t, namedEcho("echo", "Echoes a message (server a_b)."), gates["a_b"]),
			})
			cat, set, wait := attachWaiting(t, root)
			second := map[string]string{"a-b": "a_b", "a_b": "a-b"}[first]
			close(gates[first])
			wait("a_b_echo")
			close(gates[second])
			<-set.Ready()
			tl, ok := cat.Lookup("a_b_echo")
			if !ok || !strings.Contains(tl.Description, "(server a-b)") {
				t.Errorf("a_b_echo is %+v, want server a-b's tool", tl)
			}
			if got := set.Tools(); len(got["a-b"]) != 1 || len(got["a_b"]) != 0 {
				t.Errorf("tools per server %v: want a_b_echo for a-b only", got)
			}
			want := []Clash{{Tool: "a_b_echo", Winner: "a-b", Loser: "a_b"}}
			if got := set.Clashes(); len(got) != 1 || got[0] != want[0] {
				t.Errorf("clashes %+v, want %+v", got, want)
			}
			w := strings.Join(set.Warnings(), "\n")
			if !strings.Contains(w, `name clash: servers "a-b" and "a_b" both have a tool named a_b_echo`) {
				t.Errorf("no clash warning:\n%s", w)
			}
			if strings.Contains(w, "changed since it was approved") || len(set.Disabled()) != 0 {
				t.Errorf("a clash reported as a changed definition: disabled %v\n%s", set.Disabled(), w)
			}
		})
	}
}
