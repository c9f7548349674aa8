package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcall/sandcall/cli/config"
)

// A project's sandcall.yaml that passes a secret through: its limits
// apply, its env_passthrough waits for trust.
func Example() {
	root, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(root)
	_ = os.WriteFile(filepath.Join(root, "sandcall.yaml"), []byte("version: 1\nlimits: {max_calls: 20}\nenv_passthrough: [AWS_SECRET_ACCESS_KEY]\n"), 0o644)

	l, err := config.Load(config.Options{User: "-", Root: root, Trusted: func(rel, hash string) bool { return false }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.File.Limits.MaxCalls, l.File.EnvPassthrough, l.Ignored)
	// Output:
	// 20 [] [env_passthrough]
}
