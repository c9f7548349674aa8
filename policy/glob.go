package policy

import (
	"path"
	"strings"
)

// glob is a compiled tool-name pattern (path.Match syntax). The common
// shapes — "prefix*", "*suffix", "*" — are matched without path.Match.
type glob struct {
	pat            string
	prefix, suffix string
	kind           globKind
}

type globKind uint8

const (
	globGeneral globKind = iota // path.Match
	globPrefix                  // prefix*
	globSuffix                  // *suffix
	globAny                     // *
)

func compileGlob(p string) glob {
	g := glob{pat: p}
	if strings.ContainsAny(p, "?[\\") {
		return g
	}
	switch n := strings.Count(p, "*"); {
	case p == "*":
		g.kind = globAny
	case n == 1 && strings.HasSuffix(p, "*"):
		g.kind, g.prefix = globPrefix, p[:len(p)-1]
	case n == 1 && strings.HasPrefix(p, "*"):
		g.kind, g.suffix = globSuffix, p[1:]
	}
	return g
}

func (g *glob) match(s string) bool {
	switch g.kind {
	case globAny:
		return !strings.Contains(s, "/")
	case globPrefix:
		return strings.HasPrefix(s, g.prefix) && !strings.Contains(s[len(g.prefix):], "/")
	case globSuffix:
		return strings.HasSuffix(s, g.suffix) && !strings.Contains(s[:len(s)-len(g.suffix)], "/")
	}
	ok, _ := path.Match(g.pat, s)
	return ok
}
