package search_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

func TestTermsRequests(t *testing.T) {
	cases := map[string][]string{
		"file a bug":                      {"creat", "bug"},
		"open an issue":                   {"creat", "issu"},
		"open a file":                     {"open", "file"},
		"kick off the build":              {"start", "build"},
		"I've reviewed it, don't merge":   {"review", "merg"},
		"could you just quickly restart?": {"restart"},
		// Idioms of software requests: a verb before "a"/"an" and one of
		// its objects creates it; the same verb elsewhere keeps its sense.
		"log a bug":             {"creat", "bug"},
		"log a message":         {"log", "messag"},
		"drop a comment":        {"creat", "comment"},
		"drop the table":        {"drop", "tabl"},
		"leave a review":        {"creat", "review"},
		"write up a bug":        {"creat", "bug"},
		"get rid of the branch": {"delet", "branch"},
		"tick it off my list":   {"complet", "list"},
		"cross off groceries":   {"complet", "grocery"},
		"check off":             {"complet"},
		"check the logs":        {"check", "log"},
		"sign off on the MR":    {"approv", "merg", "request"},
	}
	for in, want := range cases {
		if got := search.Terms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBrandWhole: a brand a request spells in camelCase (HubSpot) meets the
// family of that name, not its halves.
func TestBrandWhole(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "hubspot_search_contacts", Source: "hubspot", Description: "Search the contacts of the CRM."},
		{Name: "maps_find_spot", Source: "maps", Description: "Find a spot near a transit hub."},
	})
	hits, _ := hitsOf(ix.Search(bg, "HubSpot", 1, nil))
	if len(hits) == 0 || hits[0].Tool.Name != "hubspot_search_contacts" {
		t.Errorf("HubSpot: %v, want hubspot_search_contacts", hits)
	}
	// A prefix of a family's name stands for it (mongo → mongodb).
	ix = search.New([]*tools.Tool{
		{Name: "mongodb_list_collections", Source: "mongodb", Description: "List the collections of a database."},
		{Name: "postgres_list_tables", Source: "postgres", Description: "List the collections of tables of a database."},
	})
	if hits, _ := hitsOf(ix.Search(bg, "list mongo collections", 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "mongodb_list_collections" {
		t.Errorf("mongo: %v, want mongodb_list_collections", hits)
	}
}

// TestFamilyNamed: a family a request names counts fully even in a
// sentence that only tells the context (on the real catalog, where other
// families' tools count too).
func TestFamilyNamed(t *testing.T) {
	ix := search.New(loadRealCatalog(t))
	q := "How many users signed up last month? The data is in our Postgres database."
	hits, _ := hitsOf(ix.Search(bg, q, 3, nil))
	for _, h := range hits {
		if h.Tool.Name == "postgres_query" {
			return
		}
	}
	t.Errorf("Search(%q) = %v, want postgres_query in the first 3", q, hits)
}

// TestUnknownService: a short request for a thing of a service the catalog
// does not have ("a Jira ticket") finds nothing; without the service, the
// same words find the tool.
func TestUnknownService(t *testing.T) {
	ix := search.New(fixtureTools())
	for _, q := range []string{"create a Jira ticket", "open a ticket in our Zendesk"} {
		if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %s (confidence %.2f), want nothing", q, hits[0].Tool.Name, hits[0].Confidence)
		}
	}
	if hits, _ := hitsOf(ix.Search(bg, "create a ticket", 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "repo_create_issue" {
		t.Errorf("create a ticket: %v, want repo_create_issue", hits)
	}
	// Nor is the name of a folder, a file or a button.
	ix = search.New([]*tools.Tool{
		{Name: "fs_list_directory", Description: "List the files and folders in a directory."},
		{Name: "fs_read_file", Description: "Read the contents of a file."},
		{Name: "browser_click", Description: "Click a button, a link or another element of the page."},
		{Name: "repo_create_issue", Description: "Create an issue in a repository."},
	})
	for _, c := range []struct{ q, want string }{
		{"What's in my Downloads folder?", "fs_list_directory"},
		{"read the README file", "fs_read_file"},
		{"click the Submit button", "browser_click"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, hits, c.want)
		}
	}
	// A place an argument names is not a service.
	ix = search.New(append(fixtureTools(), &tools.Tool{Name: "maps_elevation", Description: "The elevation of a place above sea level."}))
	if hits, _ := hitsOf(ix.Search(bg, "What's the elevation of Denver, Colorado?", 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "maps_elevation" {
		t.Errorf("elevation of Denver: %v, want maps_elevation", hits)
	}
}

// TestContextSentence: in a request of several sentences, the one that
// asks names the tool; a sentence that only tells the situation, or a
// clause carrying the text to write, weighs less.
func TestContextSentence(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "fs_list_directory", Description: "List the files and folders in a directory."},
		{Name: "net_download_file", Description: "Download a file from a URL to the disk."},
		{Name: "repo_create_issue", Description: "Create an issue in a repository."},
		{Name: "repo_add_comment", Description: "Add a comment to an issue."},
	})
	for _, c := range []struct{ q, want string }{
		{"I downloaded a lot of files from the web yesterday. What's in my reports folder?", "fs_list_directory"},
		{"Please leave a comment on the login issue saying we create a new issue for the crash.", "repo_add_comment"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, hits, c.want)
		}
	}
	// Words whose lower case is longer or shorter than they are (İ, ẞ,
	// K) around a clause marker: cut where the marker is.
	for _, q := range []string{"İİİ İstanbul saying ſ K — ok. Please ẞẞ because İ", "İİİİİİİİ because"} {
		sure(ix.Search(bg, q, 3, nil))
	}
}

// TestParticiple: a verb a request says only as a participle is a state,
// not the action ("cancel the pipeline that is running").
func TestParticiple(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "ci_run_pipeline", Description: "Run a pipeline."},
		{Name: "ci_stop_pipeline", Description: "Stop a pipeline."},
		{Name: "ci_list_pipelines", Description: "List the pipelines of the project."},
	})
	q := "Cancel the pipeline that's currently running"
	if hits, _ := hitsOf(ix.Search(bg, q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "ci_stop_pipeline" {
		t.Errorf("Search(%q) = %v, want ci_stop_pipeline first", q, hits)
	}
}

// TestTitle: a tool's title is searched with its summary.
func TestTitle(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "crawl_map", Title: "Map a website", Description: "Discover the URLs of a site, fast."},
		{Name: "crawl_scrape", Description: "Scrape one page of a site."},
	})
	if hits, _ := hitsOf(ix.Search(bg, "map a website", 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "crawl_map" {
		t.Errorf("map a website: %v, want crawl_map", hits)
	}
}

// TestNamedThing: the name a request gives to a folder or a project ("my
// Downloads folder") is an argument: a tool that downloads does not
// match it; a family's name in the same place still counts.
func TestNamedThing(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "fs_list_directory", Description: "List the files and folders in a directory."},
		{Name: "ci_download_usage_data", Description: "Download usage data of the CI: the documents and reports of jobs."},
		{Name: "docs_get_document", Description: "Get a document."},
		{Name: "gitlab_list_projects", Description: "List GitLab projects.", Source: "gitlab"},
		{Name: "gitlab_get_project", Description: "Get a GitLab project.", Source: "gitlab"},
		{Name: "todo_list_projects", Description: "List the projects of the to-do list."},
	})
	for _, c := range []struct{ q, want string }{
		{"What's in my Downloads folder?", "fs_list_directory"},
		{"What's in my Documents folder at the moment?", "fs_list_directory"},
		{"list the GitLab projects", "gitlab_list_projects"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, hits, c.want)
		}
	}
}

// TestFamilyFallback: a request that names a family but that no tool fits
// above the floor gets the family's tools whose name has its verb (for a
// question, a reading verb); without the family, nothing.
func TestFamilyFallback(t *testing.T) {
	var ts []*tools.Tool
	for _, x := range []struct{ name, desc string }{
		{"get_collaborators", "Get the collaborators of a shared project."},
		{"add_tasks", "Add tasks to a project."},
		{"get_projects", "Get projects by id."},
	} {
		ts = append(ts, &tools.Tool{Name: "planner_" + x.name, Description: x.desc, Source: "planner"})
	}
	ts = append(ts, fixtureTools()...)
	ix := search.New(ts)
	q := "Who else is on the Kitchen Reno renovation board in Planner?"
	hits, _ := hitsOf(ix.Search(bg, q, 3, nil))
	if len(hits) == 0 {
		t.Fatalf("Search(%q) found nothing, want planner_get_… tools", q)
	}
	for _, h := range hits {
		if !strings.HasPrefix(h.Tool.Name, "planner_get_") {
			t.Errorf("Search(%q): %s, want only planner_get_… tools", q, h.Tool.Name)
		}
	}
	q = "Who else is on the Kitchen Reno renovation board?"
	if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
		t.Errorf("Search(%q) = %s, want nothing", q, hits[0].Tool.Name)
	}
}
