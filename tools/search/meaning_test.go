package search_test

import (
	"reflect"
	"testing"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// meaningTools are families whose tools say an action in other words than
// the requests that want them: a board whose update tool reassigns and
// whose sections are a project's columns, a generic API of HTTP verbs, a
// calendar that responds to invitations, a chat whose categories are
// edited, a cloud browser whose sessions are closed.
func meaningTools() []*tools.Tool {
	return []*tools.Tool{
		{Name: "board_create_issue", Description: "Create an issue in a project.", Source: "board"},
		{Name: "board_update_issue", Description: "Update an issue: its assignee, priority, state or target date.", Source: "board"},
		{Name: "board_list_issues", Description: "List the issues of a project.", Source: "board"},
		{Name: "board_create_module", Description: "Create a module in a project, with a lead and dates.", Source: "board"},
		{Name: "board_delete_module", Description: "Delete a module of a project.", Source: "board"},
		{Name: "board_create_label", Description: "Create a label in a project.", Source: "board"},
		{Name: "board_delete_label", Description: "Delete a label of a project.", Source: "board"},
		{Name: "board_create_worklog", Description: "Record the time spent on an issue.", Source: "board"},
		{Name: "board_get_total_worklogs", Description: "Get the total time spent on a project's issues.", Source: "board"},
		{Name: "board_list_members", Description: "List the members of a group, with their access level.", Source: "board"},
		{Name: "board_list_projects", Description: "List the projects of the workspace.", Source: "board"},
		{Name: "api_get", Description: "Read any resource of the tracker's API by its path.", Source: "api"},
		{Name: "api_post", Description: "Create resources of the tracker's API.", Source: "api"},
		{Name: "api_put", Description: "Replace resources of the tracker's API (full update).", Source: "api"},
		{Name: "api_patch", Description: "Partially update resources of the tracker's API.", Source: "api"},
		{Name: "api_delete", Description: "Delete resources of the tracker's API.", Source: "api"},
		{Name: "dash_get_dashboard_summary", Description: "Get a summary of a dashboard: its title and panels.", Source: "dash"},
		{Name: "dash_update_dashboard", Description: "Save a dashboard's JSON, with a commit message.", Source: "dash"},
		{Name: "dash_query_prometheus", Description: "Query Prometheus using a PromQL expression. Supports instant and range queries.", Source: "dash"},
		{Name: "dash_list_incidents", Description: "List the incidents.", Source: "dash"},
		{Name: "cal_create_event", Description: "Create an event in a calendar.", Source: "cal"},
		{Name: "cal_list_events", Description: "List the events of a calendar between two dates.", Source: "cal"},
		{Name: "cal_respond_to_event", Description: "Respond to an event invitation with Accept, Decline or Maybe.", Source: "cal"},
		{Name: "chat_edit_category", Description: "Edit a category: its name or position.", Source: "chat"},
		{Name: "chat_send", Description: "Send a message to a channel.", Source: "chat"},
		{Name: "cloud_session_create", Description: "Create a browser session in the cloud and make it the active one.", Source: "cloud"},
		{Name: "cloud_session_close", Description: "Close the current browser session.", Source: "cloud"},
		{Name: "maps_distance", Description: "Compute the great-circle distance between two points.", Source: "maps"},
		{Name: "maps_geocode", Description: "Find the coordinates of an address.", Source: "maps"},
		{Name: "work_create_project_status", Description: "Create a status update on a project: color, title and text.", Source: "work"},
		{Name: "work_create_project", Description: "Create a project in a workspace.", Source: "work"},
		{Name: "work_create_subtask", Description: "Create a subtask of a task.", Source: "work"},
		{Name: "work_update_task", Description: "Update a task's details.", Source: "work"},
		{Name: "work_get_collaborators", Description: "Get the people a shared project is shared with.", Source: "work"},
		{Name: "db_update_many", Description: "Update all the documents of a collection that match a filter.", Source: "db"},
		{Name: "db_drop_collection", Description: "Drop a collection from a database.", Source: "db"},
		{Name: "db_list_collections", Description: "List the collections of a database.", Source: "db"},
		{Name: "db_create_collection", Description: "Create a collection in a database.", Source: "db"},
		{Name: "code_create_merge_request_note", Description: "Add a note (a comment) to a merge request.", Source: "code"},
		{Name: "code_create_emoji_reaction", Description: "Add an emoji reaction to a merge request.", Source: "code"},
		{Name: "code_list_merge_requests", Description: "List the merge requests of a project.", Source: "code"},
		{Name: "shop_create_record", Description: "Create a record in a table.", Source: "shop"},
		{Name: "shop_update_table", Description: "Update a table's name or description.", Source: "shop"},
	}
}

// foundCase is a request, the tool it wants among the first three, and
// the mechanism that finds it.
type foundCase struct{ q, want, why string }

// expectFound reports each case whose tool ix does not rank among the
// first three.
func expectFound(t *testing.T, ix *search.Index, cases []foundCase) {
	t.Helper()
	for _, c := range cases {
		if hits, _ := hitsOf(ix.Search(bg, c.q, 3, nil)); !found(hits, c.want) {
			t.Errorf("Search(%q) = %v, want %s among the first three (%s)", c.q, names(hits), c.want, c.why)
		}
	}
}

// TestRequestsInOtherWords: each request asks for its tool in words the
// tool does not use; each is found among the first three.
func TestRequestsInOtherWords(t *testing.T) {
	ix := search.New(meaningTools())
	expectFound(t, ix, []foundCase{
		{"Reassign the Board issue about the broken CSV export to Priya and push its target date out.", "board_update_issue",
			"a verb's word in a noun phrase is a noun: the export is no action"},
		{"Post a yellow status update on the Q2 project in Work: 'Vendor slipped a week'.", "work_create_project_status",
			"posting a status creates it"},
		{"Rename the 'Old Projects' category on Chat to 'Archive'.", "chat_edit_category",
			"renaming changes a thing, which its edit tool does"},
		{"Update the summary of OPS-88 in Api to 'Rotate TLS certs'.", "api_patch",
			"a family whose names say no object acts on what its arguments say"},
		{"hey, kill the 'Legacy Import' module in the Data project on Board, we dropped it", "board_delete_module",
			"killing a thing that is no process deletes it"},
		{"I'm done with the cloud browser, shut down the Cloud session.", "cloud_session_close",
			"shutting a session down closes it"},
		{"Could you drop a comment on MR 12 in Code saying 'fixed in main'?", "code_create_merge_request_note",
			"dropping a comment writes one"},
		{"Drop a rocket emoji on MR 15 in Code, the team shipped it.", "code_create_emoji_reaction",
			"dropping an emoji adds one"},
		{"Who's in the security-team group on Board?", "board_list_members", "who asks for people"},
		{"Who else is on my shared 'Wedding' project in Work?", "work_get_collaborators", "who asks for people"},
		{"How far apart are Tokyo (139.69, 35.68) and Osaka (135.50, 34.69) as the crow flies?", "maps_distance",
			"how far asks for a distance"},
		{"The 'legacy-api' label keeps confusing people. Just nuke it from the Backend project in Board.", "board_delete_label",
			"a pronoun's thing is what an earlier sentence named"},
		{"Break 'Plan offsite' down into subtasks in Work: book venue, send invites, order catering.", "work_create_subtask",
			"a list after a colon is the request's content"},
		{"Spin up a module called 'Payments v2' in the Checkout project on Board, Dana as lead, running March 3 through April 25.", "board_create_module",
			"a phrasal verb's object is what it acts on"},
		{"Finally done with the vendor review (task 1209876543210) — tick it off in Work please.", "work_update_task",
			"completing a task updates it"},
		{"promql range query", "dash_query_prometheus", "a camelCase word is also indexed whole"},
		{"db dorp collection", "db_drop_collection", "two letters swapped in a four-letter word"},
		{"decline meeting invite", "cal_respond_to_event", "declining an invitation responds to it"},
		{"log hours worked on the board issue", "board_create_worklog", "logging time records it"},
		{"Put a dentist appointment on my calendar for March 12 at 3:30pm.", "cal_create_event", "putting a thing on a calendar adds it"},
		{"Set verified=true on every account document in Db where the email ends with @acme.io.", "db_update_many",
			"an assignment is a value, not what the request acts on"},
	})
}

// TestAddToAThing: adding a part to a thing is the thing's update when no
// tool adds the part: the request is no near miss.
func TestAddToAThing(t *testing.T) {
	ix := search.New(meaningTools())
	q := "Add a CPU usage panel to the Dash dashboard abc123 and save it."
	if hits, _ := hitsOf(ix.Search(bg, q, 5, nil)); !found(hits, "dash_update_dashboard") {
		t.Errorf("Search(%q) = %v, want dash_update_dashboard", q, names(hits))
	}
}

// TestNewIsNoAction: "new" describes ("for the new hire cohort"); in a
// request with a verb it asks for no creation, so a copy no tool makes is
// a near miss.
func TestNewIsNoAction(t *testing.T) {
	ix := search.New(meaningTools())
	q := "Duplicate the 'Onboarding Template' project in Work for the new hire cohort."
	if hits, _ := sure(ix.Search(bg, q, 3, nil)); len(hits) != 0 {
		t.Errorf("Search(%q) = %v, want nothing", q, names(hits))
	}
	if hits, _ := hitsOf(ix.Search(bg, "new project in work", 3, nil)); !found(hits, "work_create_project") {
		t.Errorf("new project in work = %v, want work_create_project", names(hits))
	}
}

// TestTermsOfTheseRequests: the idioms above, read as the action.
func TestTermsOfTheseRequests(t *testing.T) {
	for in, want := range map[string][]string{
		"drop a rocket emoji":       {"creat", "rocket", "emoji"},
		"check that task off":       {"complet", "task"},
		"log time on the issue":     {"creat", "time", "issu"},
		"log the output of the job": {"log", "output", "job"},
	} {
		if got := search.Terms(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRealRequestsInOtherWords: requests of the blind sets that a
// mechanism of the tenth round answers on the real catalogs; each case
// names it (a small catalog does not show them: they depend on the other
// tools a real catalog has).
func TestRealRequestsInOtherWords(t *testing.T) {
	ix1 := search.New(loadRealCatalog(t))
	ix2 := search.New(loadCatalogDir(t, "testdata/realcatalog2"))
	for _, c := range []struct {
		ix           *search.Index
		q, want, why string
	}{
		{ix1, "Who's in the security-team group on GitLab?", "gitlab_list_group_members", "who asks for people"},
		{ix2, "The 'legacy-api' label keeps confusing people. Just nuke it from the Backend project in Plane.", "plane_delete_label",
			"a pronoun's thing is what an earlier sentence named"},
		{ix2, "Spin up a module called 'Payments v2' in the Checkout project on Plane, Dana as lead, running March 3 through April 25.", "plane_create_module",
			"a phrasal verb's object is what it acts on, not a later verb's"},
		{ix2, "promql range query", "grafana_query_prometheus", "PromQL is also indexed whole"},
		{ix1, "mongodb dorp collection", "mongodb_drop_collection", "two letters swapped in a four-letter word"},
		{ix2, "decline meeting invite", "google_calendar_respond_to_event", "declining an invitation responds to it"},
		{ix2, "Put a dentist appointment on my calendar for Thursday, June 12 2025 at 3:30pm, one hour, at 221 Baker St.", "google_calendar_create_event",
			"putting a thing on a calendar adds it"},
		{ix1, "Set verified=true on every account document in Mongo where the email ends with @acme.io.", "mongodb_update_many",
			"an assignment is a value"},
	} {
		if hits, _ := hitsOf(c.ix.Search(bg, c.q, 3, nil)); !found(hits, c.want) {
			t.Errorf("Search(%q) = %v, want %s among the first three (%s)", c.q, names(hits), c.want, c.why)
		}
	}
}

// payTools are a payments service, a chat with webhooks and a task list
// whose projects can be deleted but not archived.
func payTools() []*tools.Tool {
	return []*tools.Tool{
		{Name: "pay_create_invoice", Description: "This tool will create an invoice for a customer.", Source: "pay"},
		{Name: "pay_create_refund", Description: "This tool will refund a payment intent.", Source: "pay"},
		{Name: "pay_create_customer", Description: "This tool will create a customer.", Source: "pay"},
		{Name: "pay_list_customers", Description: "This tool will fetch a list of customers.", Source: "pay"},
		{Name: "chat_send", Description: "Send a message to a channel.", Source: "chat"},
		{Name: "chat_create_webhook", Description: "Create a webhook for a channel.", Source: "chat"},
		{Name: "tasks_delete_project", Description: "Delete a project.", Source: "tasks"},
		{Name: "tasks_update_project", Description: "Update a project's name or color.", Source: "tasks"},
		{Name: "tasks_list_projects", Description: "List the projects.", Source: "tasks"},
	}
}

// TestEleventhRound: what the eleventh round reads, each case failing
// without its mechanism.
func TestEleventhRound(t *testing.T) {
	ix := search.New(payTools())
	expectFound(t, ix, []foundCase{
		{"Set up a webhook on the #deploys channel called 'CI Bot' so GitHub Actions can post build results there.", "chat_create_webhook",
			"a clause opened by so is a reason; the service it names is no target"},
		{"Customers are complaining on Twitter. Send a message to the #support channel.", "chat_send",
			"a service named in a sentence that tells is context"},
	})
	for _, c := range []struct{ q, why string }{
		{"create jira ticket", "a well-known service the catalog never mentions"},
		{"Send a message to #eng on Slack saying the deploy is done.", "Slack, capitalized, is the service asked for"},
		{"Archive my Tasks project 'Spring 2023', don't delete it, just archive it.", "a verb after a negation is what not to do"},
		{"ban user 4421 from the chat server", "an imperative whose verb no tool says, nor a synonym or a related word"},
	} {
		if hits, _ := sure(ix.Search(bg, c.q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want nothing (%s)", c.q, names(hits), c.why)
		}
	}
	if hits, _ := sure(search.New(loadCatalogDir(t, "testdata/realcatalog2")).Search(bg, "Silence the DiskFull alert in Grafana for the next two hours.", 3, nil)); len(hits) != 0 {
		t.Errorf("silence the alert: %v, want nothing (an imperative whose verb no tool says)", names(hits))
	}
	// On the third real catalog.
	ix3 := search.New(loadCatalogDir(t, "testdata/realcatalog3"))
	expectFound(t, ix3, []foundCase{
		{"Bill Acme Corp (cus_N8aB3xYz) for the onboarding workshop and give them 30 days to pay.", "stripe_create_invoice", "to bill is to invoice"},
		{"Customer was double charged on pi_3NxQ2LJd8k2a1B0c. Please refund $25.00 of it.", "stripe_create_refund",
			"a verb that names what a tool makes (create_refund) is met by it"},
	})
	ix2 := search.New(loadCatalogDir(t, "testdata/realcatalog2"))
	expectFound(t, ix2, []foundCase{
		{"declare incident grafana", "grafana_create_incident", "declaring an incident creates it: no unknown verb"},
		{"Push my dentist appointment on the 14th from 2pm to 4pm, same length.", "google_calendar_update_event", "pushing a date is an update"},
	})
	// A service the catalog names in its descriptions is no absent one,
	// though the index holds its name stemmed (supabase → supabas).
	expectFound(t, search.New(loadRealCatalog(t)), []foundCase{
		{"Get the latest Supabase documentation for auth", "context7_query_docs", "context7 names Supabase among its libraries"},
		{"Go to Etsy in the browser and search for ceramic mugs", "puppeteer_navigate", "a service's site is a browser's to open"},
	})
	// A service's site is a browser's to open.
	web := search.New([]*tools.Tool{
		{Name: "browser_navigate", Description: "Navigate the browser to a URL.", Source: "browser"},
		{Name: "browser_click", Description: "Click an element on the page.", Source: "browser"},
		{Name: "browser_type", Description: "Type text into an input on the page.", Source: "browser"},
	})
	if hits, _ := hitsOf(web.Search(bg, "Go to YouTube and search for lo-fi beats", 3, nil)); !found(hits, "browser_navigate") {
		t.Errorf("go to YouTube: %v, want browser_navigate", names(hits))
	}
	// A common word that names a service only when capitalized.
	if hits, _ := hitsOf(ix.Search(bg, "send a message to the channel, there is some slack in the schedule", 3, nil)); !found(hits, "chat_send") {
		t.Errorf("slack in lower case: %v, want chat_send", names(hits))
	}
}
