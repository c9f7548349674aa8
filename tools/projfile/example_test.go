package projfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandcall/sandcall/tools/projfile"
)

// A project's config that is a link to /dev/zero is refused at once,
// never read.
func Example() {
	root, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(root)
	_ = os.WriteFile(filepath.Join(root, "sandcall.yaml"), []byte("version: 1\n"), 0o644)
	_ = os.Symlink("/dev/zero", filepath.Join(root, ".mcp.json"))

	b, err := projfile.Read(filepath.Join(root, "sandcall.yaml"), 1<<20, root)
	fmt.Printf("%q %v\n", b, err)
	_, err = projfile.Read(filepath.Join(root, ".mcp.json"), 1<<20, root)
	fmt.Println(err != nil, projfile.Rel(root, filepath.Join(root, ".mcp.json")))
	// Output:
	// "version: 1\n" <nil>
	// true .mcp.json
}
