package search_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// loadFixture reads testdata/catalog.txt: realistic tools of many families
// (crm, billing, github, calendar, files, k8s, …) with overlapping
// vocabulary.
func loadFixture(t testing.TB) []*tools.Tool {
	t.Helper()
	f, err := os.Open("testdata/catalog.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ts []*tools.Tool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) != 3 {
			t.Fatalf("bad fixture line %q", line)
		}
		in := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		for _, p := range strings.Split(parts[2], ";") {
			name, desc, ok := strings.Cut(strings.TrimSpace(p), ":")
			if !ok {
				continue
			}
			name = strings.TrimSpace(name)
			in.Properties[name] = &jsonschema.Schema{Type: "string", Description: strings.TrimSpace(desc)}
			in.PropertyOrder = append(in.PropertyOrder, name)
		}
		ts = append(ts, &tools.Tool{Name: strings.TrimSpace(parts[0]), Description: strings.TrimSpace(parts[1]), InputSchema: in,
			Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }})
	}
	return ts
}

type query struct {
	text string
	want []string // any of them counts
}

func loadQueries(t *testing.T, file string) []query {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var qs []query
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, want, ok := strings.Cut(line, "=>")
		if !ok {
			t.Fatalf("bad query line %q", line)
		}
		qs = append(qs, query{strings.TrimSpace(q), strings.Split(strings.TrimSpace(want), "|")})
	}
	return qs
}

// TestQuality: for the labelled search queries (phrased as a model writes
// them, not copied from descriptions), the right tool must be in the top 3
// for at least 90% of them. For conversational requests passed verbatim
// (testdata/utterances.txt), the figure is reported and guarded against
// regressions only.
func TestQuality(t *testing.T) {
	ts := loadFixture(t)
	if len(ts) < 200 {
		t.Fatalf("fixture has %d tools, want at least 200", len(ts))
	}
	ix := search.New(ts)
	for _, set := range []struct {
		file string
		min  float64
	}{
		{"testdata/queries.txt", 0.90},
		{"testdata/utterances.txt", 0.50},
	} {
		qs := loadQueries(t, set.file)
		if len(qs) < 30 {
			t.Fatalf("%s: %d queries, want at least 30", set.file, len(qs))
		}
		top1, top3 := quality(t, ix, ts, qs)
		rate := float64(top3) / float64(len(qs))
		t.Logf("%s on %d tools: top-3 %d/%d (%.1f%%), top-1 %d/%d (%.1f%%)", set.file,
			len(ts), top3, len(qs), 100*rate, top1, len(qs), 100*float64(top1)/float64(len(qs)))
		if rate < set.min {
			t.Errorf("%s: top-3 rate %.1f%%, want at least %.0f%%", set.file, 100*rate, 100*set.min)
		}
	}
}

func quality(t *testing.T, ix *search.Index, ts []*tools.Tool, qs []query) (top1, top3 int) {
	names := map[string]bool{}
	for _, tool := range ts {
		names[tool.Name] = true
	}
	for _, q := range qs {
		want := map[string]bool{}
		for _, w := range q.want {
			if !names[w] {
				t.Fatalf("query %q expects %s, which is not in the fixture", q.text, w)
			}
			want[w] = true
		}
		hits := ix.Search(bg, q.text, 3, nil).Hits // confident or only the closest
		rank := -1
		var got []string
		for i, h := range hits {
			got = append(got, h.Tool.Name)
			if want[h.Tool.Name] && rank < 0 {
				rank = i
			}
		}
		switch {
		case rank == 0:
			top1++
			top3++
		case rank > 0:
			top3++
		default:
			t.Logf("miss: %q: want %s, got %v", q.text, strings.Join(q.want, " or "), got)
		}
	}
	return top1, top3
}

// TestFloor: a query that shares only common words with the catalog, or
// none, finds nothing, rather than every tool that happens to share a word.
func TestFloor(t *testing.T) {
	ix := search.New(loadFixture(t))
	for _, q := range []string{
		"bake a chocolate cake for the party",
		"list",
		"get the list of names",
		"please show me everything",
		"",
		"   ,,, ",
	} {
		if hits, total := sure(ix.Search(bg, q, 5, nil)); len(hits) != 0 || total != 0 {
			var got []string
			for _, h := range hits {
				got = append(got, h.Tool.Name)
			}
			t.Errorf("Search(%q) = %v (total %d), want nothing", q, got, total)
		}
	}
	// The relative floor: a strong match does not drag in every tool that
	// shares one of its words.
	hits, total := sure(ix.Search(bg, "kubernetes pod logs", 0, nil))
	if total > 10 {
		var got []string
		for _, h := range hits {
			got = append(got, h.Tool.Name)
		}
		t.Errorf("kubernetes pod logs: %d matches above the floor, want few: %v", total, got)
	}
}

func TestExactNameAndKeep(t *testing.T) {
	ts := loadFixture(t)
	ix := search.New(ts)
	hits, _ := sure(ix.Search(bg, "k8s_rollout_undo", 3, nil))
	if len(hits) == 0 || hits[0].Tool.Name != "k8s_rollout_undo" {
		t.Errorf("exact name is not first: %v", hits)
	}
	// keep hides tools: neither returned nor counted.
	keep := func(t *tools.Tool) bool { return !strings.HasPrefix(t.Name, "k8s_") }
	hits, total := sure(ix.Search(bg, "restart kubernetes deployment", 10, keep))
	for _, h := range hits {
		if strings.HasPrefix(h.Tool.Name, "k8s_") {
			t.Errorf("kept out tool %s returned", h.Tool.Name)
		}
	}
	all, allTotal := sure(ix.Search(bg, "restart kubernetes deployment", 10, nil))
	if len(all) == 0 || allTotal <= total {
		t.Errorf("without keep: %d hits (total %d); with: total %d", len(all), allTotal, total)
	}
	// limit caps what is shown, not the total.
	hits, total = sure(ix.Search(bg, "invoice", 2, nil))
	if len(hits) != 2 || total <= 2 {
		t.Errorf("limit 2: %d hits, total %d", len(hits), total)
	}
}

func TestTerms(t *testing.T) {
	cases := map[string][]string{
		"getHTTPStatus":               {"get", "http", "status"},
		"github_list_pull_requests":   {"github", "list", "pull", "request"},
		"Invoices invoicing invoiced": {"invoic", "invoic", "invoic"},
		"running stopped added":       {"run", "stop", "add"},
		"fetch the k8s pods":          {"fetch", "k8s", "pod"},
		"log into the admin console":  {"signin", "admin", "consol"},
		"sign in, then log out":       {"signin", "signout"},
		"set up a webhook":            {"creat", "webhook"},
		"setup":                       {"setup"},
		"Kubernetes PRs":              {"k8s", "pull", "request"},
		"Ünïcödé naïve café":          {"ünïcödé", "naïve", "café"},
	}
	for in, want := range cases {
		if got := search.Terms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLive(t *testing.T) {
	cat, err := tools.NewCatalog(loadFixture(t)[:20]...)
	if err != nil {
		t.Fatal(err)
	}
	l := search.NewLive(cat)
	if n := l.Index().Len(); n != 20 {
		t.Fatalf("index of %d tools, want 20", n)
	}
	if hits, _ := sure(l.Index().Search(bg, "forecast weather", 3, nil)); len(hits) != 0 {
		t.Fatalf("weather found before it was added: %v", hits)
	}
	err = cat.Add(&tools.Tool{Name: "weather_get_forecast", Description: "Get the weather forecast for a city.",
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if hits, _ := hitsOf(l.Index().Search(bg, "forecast weather", 3, nil)); len(hits) == 0 || hits[0].Tool.Name != "weather_get_forecast" {
		t.Errorf("weather not found after it was added: %v", hits)
	}
	cat.Remove("weather_get_forecast")
	if hits, _ := sure(l.Index().Search(bg, "forecast weather", 3, nil)); len(hits) != 0 {
		t.Errorf("weather found after it was removed: %v", hits)
	}
}

// TestHostileInput: huge and odd queries and descriptions are bounded.
func TestHostileInput(t *testing.T) {
	big := &tools.Tool{Name: "big", Description: strings.Repeat("word ", 1<<20),
		Handler: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}
	ix := search.New(append(loadFixture(t), big))
	for _, q := range []string{strings.Repeat("invoice ", 100000), strings.Repeat("\xff", 5000), "\x00\x01 delete"} {
		hits, _ := hitsOf(ix.Search(bg, q, 5, nil))
		if len(hits) > 5 {
			t.Errorf("limit ignored: %d hits", len(hits))
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	ts := loadFixture(b)
	ix := search.New(ts)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sure(ix.Search(bg, "who is on call for the checkout service right now", 5, nil))
	}
}

func BenchmarkBuild500(b *testing.B) {
	ts := loadFixture(b)
	var big []*tools.Tool
	for i := 0; len(big) < 500; i++ {
		c := *ts[i%len(ts)]
		c.Name = fmt.Sprintf("%s_%d", c.Name, i)
		big = append(big, &c)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		search.New(big)
	}
}

// FuzzSearch: any query (a model writes it) is answered within the limit,
// without a panic, and every hit is a tool of the index.
func FuzzSearch(f *testing.F) {
	ts := loadFixture(f)
	ix := search.New(ts)
	for _, q := range []string{"restart kubernetes deployment", "PRs", "getHTTPStatus", "\xff\xfe", "a_b-c.d", strings.Repeat("x", 2000)} {
		f.Add(q, 3)
	}
	f.Fuzz(func(t *testing.T, q string, limit int) {
		hits, total := sure(ix.Search(bg, q, limit, nil))
		if limit > 0 && len(hits) > limit || total < len(hits) || total > ix.Len() {
			t.Fatalf("Search(%q, %d): %d hits, total %d", q, limit, len(hits), total)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Fatalf("not ranked: %v", hits)
			}
		}
	})
}

func TestStripLiterals(t *testing.T) {
	ts := []*tools.Tool{
		{Name: "files_edit", Description: "Edit a file: replace text in it, such as a port or a setting."},
		{Name: "files_read", Description: "Read a file."},
		{Name: "issues_comment", Description: "Comment on an issue."},
		{Name: "issues_create", Description: "Create an issue."},
	}
	ix := search.New(ts)
	for _, c := range []struct{ q, want string }{
		// The values a request names are arguments, not words no tool
		// uses: the tool that does the action still fits.
		{"edit the port from 8080 to 9090 in config.yaml", "files_edit"},
		{"edit ./src/lib/auth.go and https://example.com/x.html", "files_edit"},
		{"Leave a comment on issue #17 saying 'the fix is deployed, thanks Priya'", "issues_comment"},
		// An apostrophe inside a word is not a quote.
		{"it's time to comment on the issue", "issues_comment"},
	} {
		hits, _ := hitsOf(ix.Search(bg, c.q, 1, nil))
		if len(hits) == 0 || hits[0].Tool.Name != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, hits, c.want)
		}
	}
	// A quoted phrase with one word around it is what the query looks for.
	if hits, _ := hitsOf(ix.Search(bg, `the "comment" tool`, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "issues_comment" {
		t.Errorf("a quoted phrase: %v", hits)
	}
	// A query of literals only is searched as it is.
	if hits, _ := hitsOf(ix.Search(bg, "'files_edit'", 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "files_edit" {
		t.Errorf("a quoted name: %v", hits)
	}
}

func TestVerbAgreement(t *testing.T) {
	ts := []*tools.Tool{
		{Name: "repo_create_merge_request", Description: "Create a merge request."},
		{Name: "repo_list_merge_requests", Description: "List merge requests."},
		{Name: "repo_delete_branch", Description: "Delete a branch."},
		{Name: "repo_get_branch", Description: "Get a branch."},
	}
	ix := search.New(ts)
	for _, c := range []struct{ q, want string }{
		// A question without a verb reads.
		{"Which branch?", "repo_get_branch"},
		// The verb the query says wins over the other verbs of a family.
		{"list the merge request", "repo_list_merge_requests"},
		{"create the merge requests", "repo_create_merge_request"},
		{"remove the branch", "repo_delete_branch"},
	} {
		hits, _ := hitsOf(ix.Search(bg, c.q, 1, nil))
		if len(hits) == 0 || hits[0].Tool.Name != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, hits, c.want)
		}
	}
}

// fixtureTools is a small catalog of several families for the confidence
// tests below.
func fixtureTools() []*tools.Tool {
	return []*tools.Tool{
		{Name: "db_delete_many", Description: "Delete many documents from a collection."},
		{Name: "db_find", Description: "Find documents in a collection."},
		{Name: "db_count", Description: "Count the documents in a collection."},
		{Name: "maps_directions", Description: "The route and time to drive, walk or ride between two places."},
		{Name: "maps_geocode", Description: "Turn an address into coordinates."},
		{Name: "repo_create_issue", Description: "Create an issue in a repository."},
		{Name: "repo_list_issues", Description: "List the issues of a repository."},
		{Name: "repo_create_branch", Description: "Create a branch in a repository."},
	}
}

func TestNoObject(t *testing.T) {
	ix := search.New(fixtureTools())
	// The query's action fits a tool, the thing it acts on fits none.
	for _, q := range []string{"delete my Spotify playlist of songs", "create a new Google Sheet"} {
		if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %s (confidence %.2f), want nothing", q, hits[0].Tool.Name, hits[0].Confidence)
		}
	}
	// Said the object, the same verb finds the tool.
	if hits, _ := hitsOf(ix.Search(bg, "delete the documents", 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "db_delete_many" {
		t.Errorf("delete the documents: %v", hits)
	}
}

func TestLongRequest(t *testing.T) {
	ix := search.New(fixtureTools())
	// A request's context (places, days) is said by no tool; the floor of
	// a long request is lower, so the tool that fits its action is found.
	q := "How much time to drive the route from Boston to New York City on Friday"
	if hits, _ := hitsOf(ix.Search(bg, q, 3, nil)); len(hits) == 0 || hits[0].Tool.Name != "maps_directions" {
		t.Errorf("Search(%q) = %v, want maps_directions first", q, hits)
	}
}

// nearMissTools is a family whose tools act on records, tables and bases,
// none of which deletes a base, and a tool of several operations named by
// an argument's enum.
func nearMissTools() []*tools.Tool {
	action := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"action": {Type: "string", Enum: []any{"create", "update", "vote"}},
	}}
	return []*tools.Tool{
		{Name: "sheets_delete_records", Description: "Delete records from a table.", Source: "sheets"},
		{Name: "sheets_list_bases", Description: "List the bases you can reach.", Source: "sheets"},
		{Name: "sheets_create_table", Description: "Create a table in a base.", Source: "sheets"},
		{Name: "sheets_list_records", Description: "List the records of a table.", Source: "sheets"},
		{Name: "code_delete_branch", Description: "Delete a branch.", Source: "code"},
		{Name: "code_pull_request_write", Description: "Write operations on pull requests.", InputSchema: action, Source: "code"},
		{Name: "code_pull_request", Description: "Read pull request data.", Source: "code"},
	}
}

func TestActionMeetsObject(t *testing.T) {
	ix := search.New(nearMissTools())
	// Asked an action on a thing no tool of the family does it to: the
	// tools that delete other things, or list bases, are near misses.
	for _, q := range []string{"Delete the Sheets base 'Old Inventory'.", "delete the base in sheets", "remove the old base", "Archive the Sheets base 'Old Inventory'.", "Share the sheets base with bob@example.com"} {
		if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %s (confidence %.2f), want nothing", q, hits[0].Tool.Name, hits[0].Confidence)
		}
	}
	for _, c := range []struct{ q, want string }{
		// The same action on a thing a tool does it to.
		{"Delete the records of last year from the Sheets table.", "sheets_delete_records"},
		{"delete the base's records", "sheets_delete_records"},
		// A question reads; it is not held to its verb.
		{"Which bases can I delete records from?", "sheets_delete_records"},
		// A tool of several operations does the ones its enum names.
		{"open a pull request in code", "code_pull_request_write"},
	} {
		hits, _ := hitsOf(ix.Search(bg, c.q, 3, nil))
		found := false
		for _, h := range hits {
			found = found || h.Tool.Name == c.want
		}
		if !found {
			t.Errorf("Search(%q) = %v, want %s among the first three", c.q, hits, c.want)
		}
	}
	// A caller who may not call the one tool that deletes records asks
	// for what its catalog lacks.
	noDelete := func(tl *tools.Tool) bool { return tl.Name != "sheets_delete_records" }
	if hits, _ := sure(ix.Search(bg, "Delete the records of last year from the Sheets table.", 3, noDelete)); len(hits) != 0 {
		t.Errorf("without sheets_delete_records: %s (confidence %.2f), want nothing", hits[0].Tool.Name, hits[0].Confidence)
	}
}

func TestChangesUpdate(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "repo_update_issue", Description: "Update an issue's title, description, labels, state or milestone.", Source: "repo"},
		{Name: "repo_get_issue", Description: "Get one issue of a project.", Source: "repo"},
		{Name: "repo_list_issues", Description: "List the issues of a project.", Source: "repo"},
		{Name: "repo_create_merge_request", Description: "Open a merge request from a branch.", Source: "repo"},
		{Name: "repo_merge_merge_request", Description: "Merge a merge request.", Source: "repo"},
		{Name: "repo_list_merge_requests", Description: "List the merge requests of a project.", Source: "repo"},
		{Name: "repo_create_branch", Description: "Create a branch.", Source: "repo"},
		{Name: "repo_delete_branch", Description: "Delete a branch.", Source: "repo"},
		{Name: "repo_get_file_contents", Description: "Read a file of a project.", Source: "repo"},
		{Name: "repo_list_commits", Description: "List the commits of a branch.", Source: "repo"},
		{Name: "todo_close_task", Description: "Close (complete) a task.", Source: "todo"},
		{Name: "todo_create_task", Description: "Add a task to a list.", Source: "todo"},
		{Name: "todo_list_tasks", Description: "List the tasks due.", Source: "todo"},
		{Name: "files_move_file", Description: "Move a file to another folder.", Source: "files"},
		{Name: "files_read_file", Description: "Read a file.", Source: "files"},
		{Name: "files_list_directory", Description: "List a folder.", Source: "files"},
	})
	// Closing, reopening or assigning an issue is done by its update tool
	// when the catalog has no tool named for the change.
	for _, q := range []string{"Close issue #88 in the repo, it's a duplicate.", "reopen issue 12", "assign issue 7 to Dana", "Add the label bug to issue 12"} {
		hits, _ := hitsOf(ix.Search(bg, q, 1, nil))
		if len(hits) == 0 || hits[0].Tool.Name != "repo_update_issue" {
			t.Errorf("Search(%q) = %v, want repo_update_issue first", q, hits)
		}
	}
}

func TestHowMany(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "db_count", Description: "Count the documents in a collection that match a filter.", Source: "db"},
		{Name: "db_find", Description: "Find documents in a collection.", Source: "db"},
		{Name: "ci_get_pipeline_status", Description: "Get the status of the latest pipeline.", Source: "ci"},
		{Name: "repo_list_commit_statuses", Description: "List the statuses of a commit.", Source: "repo"},
	})
	q := "How many documents in shop.orders have status 'refunded'?"
	if hits, _ := hitsOf(ix.Search(bg, q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "db_count" {
		t.Errorf("Search(%q) = %v, want db_count first", q, hits)
	}
}
