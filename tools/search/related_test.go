package search

import (
	"slices"
	"strings"
	"testing"
)

// TestRelatedTable: every word of the embedded WordNet table is found by
// the binary search, with its related words and class, lines are sorted
// and unique, and a word between two keys is not found.
func TestRelatedTable(t *testing.T) {
	if len(relatedTable) > 400<<10 {
		t.Errorf("related.txt is %d bytes, want at most 400 KB", len(relatedTable))
	}
	lines := strings.Split(strings.TrimSuffix(relatedTable, "\n"), "\n")
	if len(lines) < 1000 {
		t.Fatalf("related.txt has %d lines", len(lines))
	}
	prev := ""
	for _, line := range lines {
		fs := strings.Fields(line)
		key, class, _ := strings.Cut(fs[0], ":")
		if key <= prev {
			t.Fatalf("related.txt: %q after %q: not sorted or not unique", key, prev)
		}
		prev = key
		rel, arg := related(key)
		if !slices.Equal(rel, fs[1:]) || arg != (class == "a") {
			t.Fatalf("related(%q) = %v, %v; the line is %q", key, rel, arg, line)
		}
		if rel, arg := related(key + "\x01"); rel != nil || arg {
			t.Fatalf("related(%q) = %v, %v for a word not in the table", key+"\x01", rel, arg)
		}
	}
	for _, w := range []string{"", "\x00", "zzzzzzzz"} {
		if rel, arg := related(w); rel != nil || arg {
			t.Errorf("related(%q) = %v, %v", w, rel, arg)
		}
	}
	// What WordNet says (a derivation, an adjective's attribute, a
	// synonym), in index form; and nouns of time and people.
	for w, want := range map[string]string{"remind": "reminder", "big": "size", "complet": "completion"} {
		if rel, _ := related(w); !slices.Contains(rel, want) {
			t.Errorf("related(%q) = %v, want %q among them", w, rel, want)
		}
	}
	for _, w := range []string{"friday", "dentist", "week"} {
		if _, arg := related(w); !arg {
			t.Errorf("related(%q): not an argument's word", w)
		}
	}
}

func BenchmarkRelated(b *testing.B) {
	ws := []string{"remind", "big", "friday", "zebra", "transcrib", "hog"}
	for i := 0; i < b.N; i++ {
		related(ws[i%len(ws)])
	}
}
