// Package txtar reads the txtar archives of the data-driven engine tests
// (sandbox/js, sandbox/parity): a comment, then files, each introduced by a
// line "-- name --". It is golang.org/x/tools/txtar's format; that module is
// not among the project's dependencies, and one reader fits in a function.
package txtar

import "strings"

// Archive is a parsed archive.
type Archive struct {
	// Comment is the text before the first file.
	Comment string
	// Files maps each file's name to its content (a file named twice keeps
	// its last content).
	Files map[string]string
}

// Parse parses data. It never fails: text before the first marker is the
// comment, and a malformed marker line is content.
func Parse(data string) Archive {
	a := Archive{Files: map[string]string{}}
	name := ""
	var body strings.Builder
	flush := func() {
		if name == "" {
			a.Comment = body.String()
		} else {
			a.Files[name] = body.String()
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		t := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			name = strings.TrimSpace(t[3 : len(t)-3])
			continue
		}
		body.WriteString(line)
	}
	flush()
	return a
}
