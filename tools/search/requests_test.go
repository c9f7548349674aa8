package search_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// requestTools are three families with overlapping vocabulary, tools whose
// descriptions name other things after a preposition, a one-tool family,
// and tools taking a URL or a path.
func requestTools() []*tools.Tool {
	url := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"url": {Type: "string", Description: "The URL of the page."},
	}}
	path := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"path": {Type: "string", Description: "The path of the file."},
	}}
	return []*tools.Tool{
		{Name: "code_create_issue", Description: "Create an issue in a project.", Source: "code"},
		{Name: "code_list_issues", Description: "List the issues of a project.", Source: "code"},
		{Name: "code_fork_project", Description: "Fork a project to your account or another namespace.", Source: "code"},
		{Name: "code_list_pull_requests", Description: "List the pull requests of a project.", Source: "code"},
		{Name: "tracker_create_issue", Description: "Create an issue on a board.", Source: "tracker"},
		{Name: "tracker_list_issues", Description: "List the issues on a board.", Source: "tracker"},
		{Name: "sheets_delete_records", Description: "Delete records from a table.", Source: "sheets"},
		{Name: "sheets_create_table", Description: "Create a table in a base.", Source: "sheets"},
		{Name: "sheets_list_bases", Description: "List the bases you can reach.", Source: "sheets"},
		{Name: "sheets_list_records", Description: "List the records of a table.", Source: "sheets"},
		{Name: "pg_query", Description: "Run a read-only SQL query.", Source: "pg"},
		{Name: "browser_select", Description: "Select an option in a dropdown of the page.", Source: "browser"},
		{Name: "browser_click", Description: "Click an element of the page.", Source: "browser"},
		{Name: "papers_by_doi", Description: "Find a paper by its DOI.", Source: "papers"},
		{Name: "crm_create_engagement", Description: "Create an engagement (a note, a call or a task) on a deal or a contact.", Source: "crm"},
		{Name: "crm_list_deals", Description: "List the deals of the pipeline.", Source: "crm"},
		{Name: "web_fetch", Description: "Fetch a URL and return the content of the page as markdown.", InputSchema: url, Source: "web"},
		{Name: "notes_get_note", Description: "Get a note by its id, with its text.", Source: "notes"},
		{Name: "files_read_file", Description: "Read the lines of a file.", InputSchema: path, Source: "files"},
		{Name: "logs_get_lines", Description: "Get the last lines of a service's log.", Source: "logs"},
		{Name: "tasks_create_task", Description: "Add a task to a list, with a due date.", Source: "tasks"},
		{Name: "tasks_list_tasks", Description: "List the tasks due.", Source: "tasks"},
		{Name: "tasks_count_tasks", Description: "Count the tasks of a project by state.", Source: "tasks"},
		{Name: "code_delete_branch_protection", Description: "Remove the protection rule from a branch.", Source: "code"},
		{Name: "code_create_branch", Description: "Create a branch from a commit.", Source: "code"},
		{Name: "es_search", Description: "Perform a search with the provided query DSL.", Source: "es"},
		{Name: "es_list_indices", Description: "List all available indices.", Source: "es"},
		{Name: "es_get_mappings", Description: "Get field mappings for a specific index.", Source: "es"},
		{Name: "es_get_shards", Description: "Get shard information for all or specific indices.", Source: "es"},
		{Name: "circleci_run_pipeline", Description: "Run a pipeline of a project.", Source: "circleci"},
		{Name: "circleci_get_job_logs", Description: "Get the logs of a failed job.", Source: "circleci"},
		{Name: "server_set_variable", Description: "Add or set an environment variable of the server.", Source: "server"},
		{Name: "tasks_update_project", Description: "Update a project's name or color.", Source: "tasks"},
		{Name: "tasks_update_task", Description: "Update a task's title or due date.", Source: "tasks"},
		{Name: "sheets_list_comments", Description: "List the comments of a record.", Source: "sheets"},
		{Name: "chat_send", Description: "Send a message to a specific channel.", Source: "chat"},
		{Name: "chat_list_channels", Description: "List the channels of a server.", Source: "chat"},
	}
}

// found reports whether want is among hits.
func found(hits []search.Hit, want string) bool {
	return slices.ContainsFunc(hits, func(h search.Hit) bool { return h.Tool.Name == want })
}

func names(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Tool.Name)
	}
	return out
}

// TestNamedFamilyOnly: a request that names a family is answered with that
// family's tools only, even where another family's tool fits its words as
// well.
func TestNamedFamilyOnly(t *testing.T) {
	ix := search.New(requestTools())
	for _, q := range []string{"create an issue in tracker", "File a bug on the Tracker board: login fails on Safari."} {
		hits, _ := hitsOf(ix.Search(bg, q, 5, nil))
		if len(hits) == 0 || hits[0].Tool.Name != "tracker_create_issue" {
			t.Errorf("Search(%q) = %v, want tracker_create_issue first", q, names(hits))
		}
		for _, h := range hits {
			if h.Tool.Source != "tracker" {
				t.Errorf("Search(%q) returned %s, of a family the request does not name", q, h.Tool.Name)
			}
		}
	}
}

// TestDirectObject: a tool acts on what its description says after the
// verb, not on what a preposition brings in ("Delete records from a table"
// deletes no table), so a request for that is a near miss; what a tool
// acts on stays found however the description goes on.
func TestDirectObject(t *testing.T) {
	ix := search.New(requestTools())
	for _, q := range []string{"Delete the 'Old Leads' table from the Sheets base.", "create a new base in sheets"} {
		if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v (confidence %.2f), want nothing", q, names(hits), hits[0].Confidence)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"fork the project into my namespace", "code_fork_project"},
		{"Delete last year's records from the Sheets table.", "sheets_delete_records"},
		{"create a table in the sheets base", "sheets_create_table"},
		// A parenthesis after the object lists what it is.
		{"add a note to the Acme deal in crm", "crm_create_engagement"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 3, nil)); !found(hits, c.want) {
			t.Errorf("Search(%q) = %v, want %s among the first three", c.q, names(hits), c.want)
		}
	}
}

// TestSmallFamily: a family of one tool named in a request is the answer,
// whatever the request acts on; another family's tool naming that thing
// does not make it a near miss.
func TestSmallFamily(t *testing.T) {
	ix := search.New(requestTools())
	for _, q := range []string{"run a SELECT on pg", "Run SELECT count(*) FROM users against pg."} {
		if hits, _ := hitsOf(ix.Search(bg, q, 3, nil)); len(hits) == 0 || hits[0].Tool.Name != "pg_query" {
			t.Errorf("Search(%q) = %v, want pg_query first", q, names(hits))
		}
	}
}

// TestLiteralKinds: a URL or a path in a request says what the tool takes.
func TestLiteralKinds(t *testing.T) {
	ix := search.New(requestTools())
	for _, c := range []struct{ q, want string }{
		{"Grab the text of https://example.com/blog/post-42 so I can summarize it.", "web_fetch"},
		{"Read https://example.com/blog/post-42 and summarize it for me.", "web_fetch"},
		{"Show me the last 50 lines of /var/log/nginx/error.log.", "files_read_file"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, names(hits), c.want)
		}
	}
}

// TestRequestPhrases: everyday ways of asking, read as the action they
// ask for.
func TestRequestPhrases(t *testing.T) {
	ix := search.New(requestTools())
	for _, c := range []struct{ q, want string }{
		{"Remind me to renew the car insurance next Friday.", "tasks_create_task"},
		{"Log the call I just had with Acme in crm: they want a quote.", "crm_create_engagement"},
		{"Pull the list of deals from the crm", "crm_list_deals"},
		{"nuke the old records of the sheets table", "sheets_delete_records"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, names(hits), c.want)
		}
	}
	// Two stop words are not a compound ("do I" is no DOI).
	if hits, _ := hitsOf(ix.Search(bg, "how do I click", 3, nil)); found(hits, "papers_by_doi") {
		t.Errorf("how do I click: %v, want no papers_by_doi", names(hits))
	}
	for in, want := range map[string][]string{
		"remind me to call mom":      {"creat", "remind", "call", "mom"},
		"log the call with Acme":     {"creat", "call", "acme"},
		"pull the prices":            {"get", "pric"},
		"list pull requests":         {"list", "pull", "request"},
		"start a new branch":         {"creat", "branch"},
		"grab the docs":              {"grab", "doc"},
		"log the output of the job":  {"log", "output", "job"},
		"start a pipeline on a push": {"start", "pipelin", "push"},
	} {
		if got := search.Terms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGateKeepsRanking: a request whose words no tool says (a place, a
// kind of shop) still finds the tool ranked first, once one of the best
// fits clears the floor — it is not dropped for a tool that fits another
// word better.
func TestGateKeepsRanking(t *testing.T) {
	ix := search.New(loadRealCatalog(t))
	for _, c := range []struct{ q, want string }{
		{"Find a 24-hour pharmacy near Union Square in San Francisco.", "brave_search_brave_local_search"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 3, nil)); !found(hits, c.want) {
			t.Errorf("Search(%q) = %v, want %s among the first three", c.q, names(hits), c.want)
		}
	}
}

// TestPastIsState: a verb said only in the past tells what happened, not
// what to do ("I already called the plumber — check that task off").
func TestPastIsState(t *testing.T) {
	ix := search.New(requestTools())
	q := "I already deleted the old records, now list the bases of sheets."
	if hits, _ := hitsOf(ix.Search(bg, q, 1, nil)); len(hits) == 0 || hits[0].Tool.Name != "sheets_list_bases" {
		t.Errorf("Search(%q) = %v, want sheets_list_bases first", q, names(hits))
	}
}

// TestNameHead: a tool acts on its name's last word (delete_branch_protection
// deletes protections, not branches), or on what its description says as
// a verb's object ("Remove the protection rule from a branch").
func TestNameHead(t *testing.T) {
	ix := search.New(requestTools())
	for _, q := range []string{"delete the branch old-login in code", "Delete the stale branch feature/x from the code repo."} {
		if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v (confidence %.2f), want nothing", q, names(hits), hits[0].Confidence)
		}
	}
	if hits, _ := hitsOf(ix.Search(bg, "remove the protection of branch main in code", 3, nil)); !found(hits, "code_delete_branch_protection") {
		t.Errorf("remove the protection of branch main: %v, want code_delete_branch_protection", names(hits))
	}
}

// TestReadingNeedsNoObject: what a request reads may be a thing the
// searching tool's description does not name ("search the index for
// orders"); only actions that change something must meet their object.
func TestReadingNeedsNoObject(t *testing.T) {
	ix := search.New(requestTools())
	q := "Search the 'orders-2025' es index for orders from customer 4412 with a total over 500, newest first."
	if hits, _ := hitsOf(ix.Search(bg, q, 3, nil)); !found(hits, "es_search") {
		t.Errorf("Search(%q) = %v, want es_search among the first three", q, names(hits))
	}
	// indices is the plural of index.
	if got := search.Terms("indices"); !reflect.DeepEqual(got, []string{"index"}) {
		t.Errorf("Terms(indices) = %q", got)
	}
	if hits, _ := sure(ix.Search(bg, "delete es index", 3, nil)); len(hits) != 0 {
		t.Errorf("delete es index: %v, want nothing", names(hits))
	}
}

// TestIndirectQuestion: "I need to know how many…" asks, as a question
// does; its verbs (a project's name, "Mobile Launch") are not an action.
func TestIndirectQuestion(t *testing.T) {
	ix := search.New(requestTools())
	q := "I need to know how many tasks are still open in the tasks project 4412 (Mobile Launch)."
	if hits, _ := hitsOf(ix.Search(bg, q, 3, nil)); !found(hits, "tasks_count_tasks") {
		t.Errorf("Search(%q) = %v, want tasks_count_tasks among the first three", q, names(hits))
	}
}

// TestFamilyMustAct: a request for an action of a family none of whose
// tools does that action is a near miss, whatever it acts on.
func TestFamilyMustAct(t *testing.T) {
	ix := search.New(requestTools())
	for _, q := range []string{"Delete the contact jane.doe@acme.com from crm.", "Send a newsletter to all crm contacts who came to the webinar."} {
		if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v (confidence %.2f), want nothing", q, names(hits), hits[0].Confidence)
		}
	}
	if hits, _ := hitsOf(ix.Search(bg, "Add a note on the Acme contact in crm.", 3, nil)); !found(hits, "crm_create_engagement") {
		t.Errorf("add a note in crm: %v, want crm_create_engagement", names(hits))
	}
}

// TestRequestsNearMisses: the action is what the request's main clause
// says (not "so we can edit" after it), done to its verb's object (not the
// record the comment is on), in the family it names however it is
// written (CircleCI).
func TestRequestsNearMisses(t *testing.T) {
	ix := search.New(requestTools())
	for _, q := range []string{
		"Share my tasks project 'Home' with alex@example.com so we can both edit the tasks.",
		"delete the comment on the sheets record rec42",
	} {
		if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v (confidence %.2f), want nothing", q, names(hits), hits[0].Confidence)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"Rerun the pipeline of gh/acme/web in CircleCI.", "circleci_run_pipeline"},
		{"Delete the records of the sheets table that have no owner.", "sheets_delete_records"},
		{"Update the due date of my dentist task to Friday so that I can go to the game.", "tasks_update_task"},
	} {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 3, nil)); !found(hits, c.want) {
			t.Errorf("Search(%q) = %v, want %s among the first three", c.q, names(hits), c.want)
		}
	}
}

// TestCamelFamilyInAName: "the CircleCI project" names a family written in
// camelCase, not a project called CircleCI; its words are not dropped as a
// name's, so the family is the request's, and no CircleCI tool adds an
// environment variable (the real catalog: another server's get_env would
// answer).
func TestCamelFamilyInAName(t *testing.T) {
	ix := search.New(loadRealCatalog(t))
	q := "Add an NPM_TOKEN environment variable to the CircleCI project gh/acme/web."
	if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
		t.Errorf("Search(%q) = %v (confidence %.2f), want nothing", q, names(hits), hits[0].Confidence)
	}
}

// TestObjectsInPhrases: a request whose objects are all in prepositional
// phrases (what it posts is a quoted literal) meets a tool that names them
// in one too ("in the #releases channel", "to a specific channel").
func TestObjectsInPhrases(t *testing.T) {
	ix := search.New(requestTools())
	q := "Post 'Deploy finished, v2.3.1 is live' in the #releases channel (id 1122334455)."
	if hits, _ := hitsOf(ix.Search(bg, q, 3, nil)); !found(hits, "chat_send") {
		t.Errorf("Search(%q) = %v, want chat_send among the first three", q, names(hits))
	}
}

// TestFamilyCommonWord: a family named by a common word (a memory server)
// is not what a request means by that word in lower case ("how much
// memory does the pod use"); written as a name, it is ("in Memory").
func TestFamilyCommonWord(t *testing.T) {
	ix := search.New([]*tools.Tool{
		{Name: "memory_create_entities", Description: "Create entities in the knowledge graph.", Source: "memory"},
		{Name: "memory_delete_entities", Description: "Delete entities from the knowledge graph.", Source: "memory"},
		{Name: "memory_add_observations", Description: "Add observations to entities.", Source: "memory"},
		{Name: "memory_read_graph", Description: "Read the whole knowledge graph.", Source: "memory"},
		{Name: "memory_search_nodes", Description: "Search the nodes of the graph.", Source: "memory"},
		{Name: "k8s_pods_top", Description: "List the CPU and memory usage of the pods of a namespace.", Source: "k8s"},
		{Name: "k8s_pods_list", Description: "List the pods of a namespace.", Source: "k8s"},
	})
	q := "how much memory does the api pod use right now?"
	if hits, _ := hitsOf(ix.Search(bg, q, 3, nil)); len(hits) == 0 || hits[0].Tool.Name != "k8s_pods_top" {
		t.Errorf("Search(%q) = %v, want k8s_pods_top first", q, names(hits))
	}
	q = "Search the nodes in Memory for anything about Alice."
	if hits, _ := hitsOf(ix.Search(bg, q, 3, nil)); len(hits) == 0 || hits[0].Tool.Name != "memory_search_nodes" {
		t.Errorf("Search(%q) = %v, want memory_search_nodes first", q, names(hits))
	}
}
