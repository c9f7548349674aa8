package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is the release version; override it at build time with
//
//	go build -ldflags "-X github.com/sandcall/sandcall/cli.version=1.2.3" ./cmd/sandcall
var version = "0.1.0-dev"

func cmdVersion(_ context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "version", "", "  sandcall version\n")
	pos, code, ok := parseFlags(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErr(e, fs, "unexpected argument %q", pos[0])
	}
	fmt.Fprintf(e.stdout, "sandcall %s (%s%s)\n", version, runtime.Version(), vcsInfo())
	return exitOK
}

// vcsInfo is ", rev 0123abcdef12[, modified]" when the binary was built from
// a VCS checkout with VCS stamping, else "".
func vcsInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := ", rev " + rev
	if modified == "true" {
		out += ", modified"
	}
	return out
}
