package txtar

import "testing"

func TestParse(t *testing.T) {
	a := Parse("a comment\n-- one.js --\nreturn 1\n-- two --\n-- x --y\n-- --\n")
	if a.Comment != "a comment\n" {
		t.Errorf("comment %q", a.Comment)
	}
	if a.Files["one.js"] != "return 1\n" || a.Files["two"] != "-- x --y\n-- --\n" || len(a.Files) != 2 {
		t.Errorf("files %q", a.Files)
	}
	if a := Parse(""); a.Comment != "" || len(a.Files) != 0 {
		t.Errorf("empty: %+v", a)
	}
}
