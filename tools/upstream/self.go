package upstream

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// IsSelf reports whether the stdio server s is sandcall itself: its
// command is this process's executable (the same file as self; "" looks
// it up), or `go run` of sandcall's command. Another copy of sandcall is
// not itself (its own NestedEnv check keeps it from recursing). A
// client's config that lists sandcall beside its upstreams (the natural
// Claude Code layout) is read by sandcall too; connecting to itself would
// put sandcall_run_code in the catalog and let programs start nested runs
// with fresh budgets, so such a server is skipped.
//
// A sandcall started with a flag that gives it a catalog of its own
// (--demo, --tools-dir, --mcp-config) is a different tool set composed on
// purpose, and is not itself.
func IsSelf(s *Server, self string) bool {
	if s == nil || s.Type != TypeStdio || s.Command == "" {
		return false
	}
	for _, a := range s.Args {
		for _, f := range []string{"-demo", "-tools-dir", "-mcp-config"} {
			if a == f || a == "-"+f || strings.HasPrefix(a, f+"=") || strings.HasPrefix(a, "-"+f+"=") {
				return false
			}
		}
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
	if self == "" {
		self, _ = os.Executable()
	}
	if self == "" {
		return false
	}
	me, err := os.Stat(self)
	if err != nil {
		return false
	}
	path := s.Command
	if !strings.ContainsRune(path, os.PathSeparator) {
		if p, err := exec.LookPath(path); err == nil {
			path = p
		} else {
			return false
		}
	} else if !filepath.IsAbs(path) && s.Cwd != "" {
		path = filepath.Join(s.Cwd, path)
	}
	fi, err := os.Stat(path)
	return err == nil && os.SameFile(fi, me)
}
