package upstream

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestIsSelf: an entry that runs this sandcall is itself whatever its
// arguments (a catalog of its own, --mcp-config, another subcommand), and
// so is any program named sandcall, and `go run` of sandcall's command.
func TestIsSelf(t *testing.T) {
	me, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	root := t.TempDir()
	link := filepath.Join(root, "bin", "mine")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(me, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Server
		want bool
	}{
		{Server{Type: TypeStdio, Command: me, Args: []string{"serve"}}, true},
		{Server{Type: TypeStdio, Command: me, Args: []string{"serve", "--demo"}}, true},
		{Server{Type: TypeStdio, Command: me, Args: []string{"serve", "--mcp-config", ".sandcall/mcp.json"}}, true},
		{Server{Type: TypeStdio, Command: "./bin/mine", Args: []string{"serve"}}, true}, // relative to the project root
		{Server{Type: TypeStdio, Command: "./mine", Cwd: "bin"}, true},                  // relative to its cwd
		{Server{Type: TypeStdio, Command: "sandcall", Args: []string{"serve"}}, true},   // named so, found or not
		{Server{Type: TypeStdio, Command: "/opt/x/sandcall", Args: []string{"serve"}}, true},
		{Server{Type: TypeStdio, Command: "go", Args: []string{"run", "./cmd/sandcall", "serve"}}, true},
		{Server{Type: TypeStdio, Command: "go", Args: []string{"run", "github.com/sandcall/sandcall/cmd/sandcall@latest", "serve"}}, true},
		{Server{Type: TypeStdio, Command: "go", Args: []string{"run", "./cmd/other"}}, false},
		{Server{Type: TypeStdio, Command: "sh", Args: []string{"-c", "true"}}, false},
		{Server{Type: TypeHTTP, URL: "http://127.0.0.1/mcp"}, false},
	} {
		if got := IsSelf(&tc.s, me, root); got != tc.want {
			t.Errorf("IsSelf(%s %v) = %v, want %v", tc.s.Command, tc.s.Args, got, tc.want)
		}
	}
}

func TestSelfMCPConfigs(t *testing.T) {
	s := &Server{Type: TypeStdio, Command: "sandcall", Args: []string{"serve", "--mcp-config", ".sandcall/mcp.json", "--mcp-config=/abs/x.json", "--", "--mcp-config", "y"}}
	got := SelfMCPConfigs(s, "/p")
	want := []string{"/p/.sandcall/mcp.json", "/abs/x.json"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SelfMCPConfigs = %q, want %q", got, want)
	}
}
