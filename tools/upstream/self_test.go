package upstream

import (
	"os"
	"testing"
)

func TestIsSelf(t *testing.T) {
	me, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		s    Server
		want bool
	}{
		{Server{Type: TypeStdio, Command: me, Args: []string{"serve"}}, true},
		{Server{Type: TypeStdio, Command: "go", Args: []string{"run", "./cmd/sandcall", "serve"}}, true},
		{Server{Type: TypeStdio, Command: "go", Args: []string{"run", "github.com/sandcall/sandcall/cmd/sandcall@latest", "serve"}}, true},
		{Server{Type: TypeStdio, Command: me, Args: []string{"serve", "--demo"}}, false},
		{Server{Type: TypeStdio, Command: "go", Args: []string{"run", "./cmd/other"}}, false},
		{Server{Type: TypeStdio, Command: "sh", Args: []string{"-c", "true"}}, false},
		{Server{Type: TypeHTTP, URL: "http://127.0.0.1/mcp"}, false},
	} {
		if got := IsSelf(&tc.s, me); got != tc.want {
			t.Errorf("IsSelf(%s %v) = %v, want %v", tc.s.Command, tc.s.Args, got, tc.want)
		}
	}
}
