package search

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
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

// TestArgumentWords: words no tool uses that name a person, a day or a
// place are a request's arguments: they lower its confidence less than as
// many unknown words that could be what it asks for.
func TestArgumentWords(t *testing.T) {
	ix := New([]*tools.Tool{
		{Name: "todo_add_task", Description: "Add a task to the to-do list, with a due date."},
		{Name: "todo_list_tasks", Description: "List the tasks of the to-do list."},
		{Name: "mail_send", Description: "Send an e-mail message."},
	})
	conf := func(q string) float64 {
		r := ix.Search(context.Background(), q, 1, nil)
		hits := r.Hits
		if !r.Confident || len(hits) == 0 || hits[0].Tool.Name != "todo_add_task" {
			t.Fatalf("Search(%q) = %v, want todo_add_task first", q, hits)
		}
		return hits[0].Confidence
	}
	args, other := conf("add a task: dentist, Friday"), conf("add a task: transcribe, invoice")
	if args <= other {
		t.Errorf("confidence %.2f with a person and a day, %.2f with other unknown words: want more", args, other)
	}
}

// TestRelatedWords: a query word no tool uses finds a tool through its
// WordNet relatives ("how big is it" → size).
func TestRelatedWords(t *testing.T) {
	ix := New([]*tools.Tool{
		{Name: "fs_get_file_info", Description: "Get a file's size, creation and modification times."},
		{Name: "fs_read_file", Description: "Read a file."},
		{Name: "fs_write_file", Description: "Write a file."},
	})
	q := "how big is the file?"
	r := ix.Search(context.Background(), q, 1, nil)
	if hits := r.Hits; !r.Confident || len(hits) == 0 || hits[0].Tool.Name != "fs_get_file_info" {
		t.Errorf("Search(%q) = %+v, want fs_get_file_info", q, r)
	}
}
