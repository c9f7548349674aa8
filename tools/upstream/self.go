package upstream

import (
	"os"
	"path/filepath"
	"strings"
)

// IsSelf reports whether the stdio server s runs sandcall: its command,
// resolved from the server's directory (root when it sets none) or PATH,
// is this process's executable (the same file as self; "" looks it up) or
// a program named sandcall, or it is `go run` of sandcall's command —
// whatever its arguments. A client's config that lists sandcall beside
// its upstreams (the natural Claude Code layout) is read by sandcall too;
// connecting to itself would put sandcall_run_code in the catalog and let
// programs start nested runs with fresh budgets, so such a server is
// never started, and never trusted.
func IsSelf(s *Server, self, root string) bool {
	if s == nil || s.Type != TypeStdio || s.Command == "" {
		return false
	}
	base := filepath.Base(s.Command)
	if base == "go" && len(s.Args) > 0 && s.Args[0] == "run" {
		for _, a := range s.Args[1:] {
			a = strings.TrimSuffix(strings.SplitN(a, "@", 2)[0], "/")
			if a == "./cmd/sandcall" || a == "cmd/sandcall" || strings.HasSuffix(a, "sandcall/cmd/sandcall") {
				return true
			}
		}
		return false
	}
	if root == "" {
		root = "."
	}
	path, err := resolveCommand(s, root)
	if err != nil {
		return base == "sandcall" // not found here: named so, it is meant to be sandcall
	}
	if b := filepath.Base(path); b == "sandcall" || b == "sandcall.exe" {
		return true
	}
	if self == "" {
		self, _ = os.Executable()
	}
	if self == "" {
		return false
	}
	me, err1 := os.Stat(self)
	fi, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(fi, me)
}

// SelfMCPConfigs returns the files a sandcall entry (IsSelf) reads with
// --mcp-config, resolved from the entry's directory (root when it sets
// none): the files a client that starts this entry makes sandcall read.
func SelfMCPConfigs(s *Server, root string) []string {
	var out []string
	for i := 0; i < len(s.Args); i++ {
		a := s.Args[i]
		var v string
		switch {
		case a == "--mcp-config" || a == "-mcp-config":
			if i+1 < len(s.Args) {
				v = s.Args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--mcp-config="):
			v = strings.TrimPrefix(a, "--mcp-config=")
		case strings.HasPrefix(a, "-mcp-config="):
			v = strings.TrimPrefix(a, "-mcp-config=")
		case a == "--":
			return out
		}
		if v == "" {
			continue
		}
		if !filepath.IsAbs(v) {
			v = filepath.Join(workDir(s, root), v)
		}
		out = append(out, filepath.Clean(v))
	}
	return out
}
