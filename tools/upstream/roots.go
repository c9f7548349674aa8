package upstream

import (
	"net/url"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addProjectRoot gives client the project root (sandcall's working
// directory, where it reads .mcp.json) as its one MCP root: sandcall
// advertises the roots capability, and servers such as server-filesystem
// and server-everything ask for the list; an empty one left them guessing.
func addProjectRoot(client *mcp.Client) {
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(wd)}
	//lint:ignore SA1019 roots are deprecated from protocol 2026-07-28 on, but current servers still ask for them
	client.AddRoots(&mcp.Root{URI: u.String(), Name: filepath.Base(wd)})
}
