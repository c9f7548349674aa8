package policy

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a policy file, at a position in it.
type Problem struct {
	File string // the name given to Parse, or the path given to Load
	Line int    // 1-based; 0 if unknown
	Col  int    // 1-based; 0 if unknown
	Msg  string
}

// String formats p as "file:line:col: message", the format of compilers and
// of `sandcall policy check`.
func (p Problem) String() string {
	switch {
	case p.Line > 0 && p.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
	case p.Line > 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Error is the error of Load and Parse: every problem found, in file order.
// A file with a YAML syntax error or an unknown key reports that one problem;
// otherwise every rule is checked and all problems are reported together.
type Error struct {
	Problems []Problem
}

// Error returns the problems, one "file:line:col: message" per line.
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// problems collects Problems for one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(line, col int, format string, a ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Col: col, Msg: fmt.Sprintf(format, a...)})
}

func (ps *problems) at(p pos, format string, a ...any) { ps.add(p.line, p.col, format, a...) }

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Problems: ps.list}
}

// pos is a 1-based position in the file.
type pos struct{ line, col int }
