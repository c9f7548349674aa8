package local

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    Header
		errLine int    // expected HeaderError line, -1 for no error
		errHas  string // substring of the error
	}{
		{
			name: "shell with continuation",
			src:  "#!/bin/sh\n# @description Count lines.\n#   Of a file.\n# @param *path string the file\n#   relative to the root\n# @param n integer\necho hi\n# @param late string ignored\n",
			want: Header{Description: "Count lines. Of a file.", Line: 2, Params: []Param{
				{Name: "path", Type: "string", Required: true, Description: "the file relative to the root", Line: 4},
				{Name: "n", Type: "integer", Line: 6},
			}},
			errLine: -1,
		},
		{
			name:    "slash comments and blank lines",
			src:     "#!/usr/bin/env node\n\n// @description Node tool.\n\n// @param flag boolean on or off\n",
			want:    Header{Description: "Node tool.", Line: 3, Params: []Param{{Name: "flag", Type: "boolean", Description: "on or off", Line: 5}}},
			errLine: -1,
		},
		{
			name:    "dash comments",
			src:     "-- @description SQL-ish.\n-- @param *q object the query\n",
			want:    Header{Description: "SQL-ish.", Line: 1, Params: []Param{{Name: "q", Type: "object", Required: true, Description: "the query", Line: 2}}},
			errLine: -1,
		},
		{
			name:    "empty comment line ends continuation; unknown tag ignored",
			src:     "# @description A.\n#\n# license text\n# @author me\n# more\n",
			want:    Header{Description: "A.", Line: 1},
			errLine: -1,
		},
		{
			name:    "control and zero-width characters stripped",
			src:     "# @description Hi\u200b there\x1b[31m red\u202e.\n",
			want:    Header{Description: "Hi there[31m red.", Line: 1},
			errLine: -1,
		},
		{name: "no description", src: "#!/bin/sh\n# @param x string\n", errLine: 0, errHas: "no @description"},
		{name: "description after code", src: "echo\n# @description late\n", errLine: 0, errHas: "no @description"},
		{name: "bad type", src: "# @description d\n# @param x strin the x\n", errLine: 2, errHas: `unknown type "strin"`},
		{name: "missing type", src: "# @description d\n\n# @param x\n", errLine: 3, errHas: "want @param"},
		{name: "bad name", src: "# @description d\n# @param x-y string\n", errLine: 2, errHas: "bad parameter name"},
		{name: "duplicate ignoring case", src: "# @description d\n# @param x string\n# @param X string\n", errLine: 3, errHas: "repeats the one on line 2"},
		{name: "second description", src: "# @description d\n# @description e\n", errLine: 2, errHas: "second @description"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader([]byte(tt.src))
			if tt.errLine >= 0 {
				var he *HeaderError
				if !errors.As(err, &he) {
					t.Fatalf("err = %v, want a HeaderError", err)
				}
				if he.Line != tt.errLine || !strings.Contains(he.Msg, tt.errHas) {
					t.Fatalf("err = line %d %q, want line %d containing %q", he.Line, he.Msg, tt.errLine, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Description != tt.want.Description || h.Line != tt.want.Line || len(h.Params) != len(tt.want.Params) {
				t.Fatalf("got %+v, want %+v", h, tt.want)
			}
			for i := range h.Params {
				if h.Params[i] != tt.want.Params[i] {
					t.Errorf("param %d = %+v, want %+v", i, h.Params[i], tt.want.Params[i])
				}
			}
		})
	}
}

func TestParseHeaderLimits(t *testing.T) {
	// A description past MaxHeaderLines is not read.
	src := "# @description d\n" + strings.Repeat("#\n", MaxHeaderLines) + "# @param x bogus\n"
	if _, err := ParseHeader([]byte(src)); err != nil {
		t.Errorf("lines past the cap were read: %v", err)
	}
	long := "# @description " + strings.Repeat("é", 3*MaxDescriptionBytes) + "\n"
	h, err := ParseHeader([]byte(long))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Description) > MaxDescriptionBytes || !utf8.ValidString(h.Description) {
		t.Errorf("description: %d bytes, valid UTF-8 %v", len(h.Description), utf8.ValidString(h.Description))
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add([]byte("#!/bin/sh\n# @description d\n#  more\n# @param *x string the x\n"))
	f.Add([]byte("// @description \xff\x00\u200b\n// @param y array\n--\n"))
	f.Add([]byte("# @param"))
	f.Add([]byte("# @description\n# @param * string"))
	f.Fuzz(func(t *testing.T, src []byte) {
		h, err := ParseHeader(src)
		if err != nil {
			return
		}
		if h.Description == "" || !utf8.ValidString(h.Description) || len(h.Description) > MaxDescriptionBytes {
			t.Fatalf("bad description %q", h.Description)
		}
		for _, p := range h.Params {
			if !paramNameRE().MatchString(p.Name) || !paramTypes[p.Type] || !utf8.ValidString(p.Description) {
				t.Fatalf("bad param %+v", p)
			}
		}
		if _, err := schemaValid(h.Params); err != nil {
			t.Fatalf("schema: %v", err)
		}
	})
}
