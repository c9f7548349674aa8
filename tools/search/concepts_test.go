package search_test

import (
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/search"
)

// TestWhatRequestsImply: each request names its tool only by what it
// implies ("who changed it" a history, "put this into French" a
// translation) or by an everyday phrase whose particle stands apart from
// its verb ("get it back"); each is found among the first three, on the
// real catalogs. The phrasings are the test's own, none from a query set.
func TestWhatRequestsImply(t *testing.T) {
	c1 := search.New(loadRealCatalog(t))
	c2 := search.New(loadCatalogDir(t, "testdata/realcatalog2"))
	c3 := search.New(loadCatalogDir(t, "testdata/realcatalog3"))
	c4 := search.New(loadCatalogDir(t, "testdata/realcatalog4"))
	c5 := search.New(loadCatalogDir(t, "testdata/realcatalog5"))
	expectFound(t, c1, []foundCase{
		{"How long would it take to walk from the train station to the museum?", "google_maps_maps_directions", "getting from one place to another asks for directions"},
		{"What's the altitude of Denver's airport, roughly?", "google_maps_maps_elevation", "altitude is an elevation"},
		{"What are the coordinates of 10 Downing Street?", "google_maps_maps_geocode", "coordinates of an address are a geocode"},
		{"Put together a sourced overview of the state of fusion power funding.", "tavily_research", "a sourced write-up is research"},
		{"Something is hogging all my memory, what's running?", "desktop_commander_list_processes", "what runs on a machine are its processes"},
		{"Which deals is the Acme company tied to in the CRM?", "hubspot_list_associations", "things tied together are associations"},
	})
	expectFound(t, c2, []foundCase{
		{"Three stops today across Denver: what's the most efficient order to visit them?", "mapbox_optimization_tool", "the best order of stops is a route optimization"},
		{"As the crow flies, how many miles is it from Denver (39.74, -104.99) to Boise (43.62, -116.21)?", "mapbox_distance_tool", "as the crow flies is a distance"},
		{"Find a slot on Friday when both dana@acme.com and lee@acme.com are free.", "google_calendar_get_freebusy", "when people are free is their availability"},
		{"I want a link I can paste in the incident channel that opens dashboard ops-1.", "grafana_generate_deeplink", "a link to paste is a deep link"},
		{"Cycle 12 is over, move everything that didn't get done into cycle 13 in Plane.", "plane_transfer_cycle_issues", "moving what is left over is a transfer"},
		{"What's the p99 latency of the checkout service in Prometheus over the last hour?", "grafana_query_prometheus", "a percentile is a metric query"},
		{"In Asana, 'Ship v2' can't start until 'QA pass' is done. Can you link them that way?", "asana_add_task_dependencies", "one task waiting on another is a dependency"},
		{"I have five deliveries across Denver; figure out the most efficient order to visit them.", "mapbox_optimization_tool", "the most efficient order is an optimization"},
		{"Who's holding the pager on the platform rotation right now?", "grafana_get_current_oncall_users", "who holds the pager is on call"},
		{"What's the p99 request latency for the checkout service over the last hour? The metrics are in Prometheus.", "grafana_query_prometheus", "a percentile in a context sentence is still the metric asked for"},
		{"Who's on call for the database rotation tonight?", "grafana_get_current_oncall_users", "who answers the pager is on call"},
		{"Put a haircut on my calendar for Friday at 10am.", "google_calendar_create_event", "something put on a calendar is an event made"},
		{"Add a 'Blocked' status between Todo and In Progress in Plane.", "plane_create_state", "a status is a state"},
	})
	expectFound(t, c3, []foundCase{
		{"The client paid twice by mistake, give them their money back on pi_9Zq.", "stripe_create_refund", "money given back is a refund"},
		{"Who wrote line 40 of cmd/server/main.go?", "git_blame", "who wrote something asks for its history"},
		{"I was away all week, what's been happening on the Launch board?", "trello_get_recent_activity", "what happened asks for the activity"},
		{"Show me the P&L for last month.", "xero_list_profit_and_loss", "P&L is profit and loss"},
		{"Make a copy of the 'Q1' tab and call it 'Q2'.", "google_sheets_sheets_duplicate_sheet", "a copy made is a duplicate; a tab is a sheet"},
		{"Leave a note on ENG-77 that QA passed on staging.", "linear_add_comment", "a note left on an item is a comment"},
		{"Put Omar on the 'Launch checklist' card.", "trello_assign_member_to_card", "a person put on a card is assigned"},
		{"Show me the older versions of page 31, someone broke it.", "wordpress_wp_get_page_revisions", "earlier versions are revisions"},
		{"Add a 'nickname' varchar column to the members table in Supabase.", "supabase_apply_migration", "a column added to a table is a migration"},
		{"Add one row at the end of the Costs tab: 2024-06-01, taxi, 18.20.", "google_sheets_sheets_append_values", "rows added at the end are appended"},
		{"Create FAQ structured data for post 18.", "wordpress_wp_seo_generate_schema", "structured data is a schema"},
		{"Set up a login on the blog for our new editor Ana, ana@ourblog.com.", "wordpress_wp_create_user", "a login for someone is a user account"},
		{"The header row on the 'Costs' tab looks awful. Make it bold with a light gray background.", "google_sheets_sheets_format_cells", "bold and colours are formatting; making it bold changes it"},
		{"Get card 5f1 off the board, but don't lose it.", "trello_archive_card", "out of the way but kept is an archive"},
		{"Mark this commit as v3.1.0.", "git_tag", "a version number marks a tag"},
		{"Is there already an issue about the login page crashing?", "linear_search_issues", "whether one already exists is a search"},
		{"Silence host web-04 until the patch is done.", "datadog_mute_host", "silencing a host mutes it"},
		{"Any chargebacks this month?", "stripe_list_disputes", "a chargeback is a dispute"},
		{"Wipe the numbers in A2:C40 on the Scratch tab.", "google_sheets_sheets_clear_values", "wiping cells clears them"},
		{"Find the articles on the blog that mention our pricing, I want to list them all.", "wordpress_wp_list_posts", "a blog's articles are its posts"},
		{"Add this week's new hire to the bottom of the Staff tab: Ana Ruiz, 2024-07-01.", "google_sheets_sheets_append_values", "a row added at the bottom is appended"},
		{"Is there already a ticket about the CSV export timing out? Don't want to file a duplicate.", "linear_search_issues", "whether one already exists is a search"},
		{"What was the average CPU on the api hosts between 1pm and 3pm?", "datadog_query_metrics", "an average is a metric query"},
		{"My Supabase project got paused, please bring it back online.", "supabase_restore_project", "a thing brought back online is restored"},
		{"Clone https://github.com/acme/tools.git into ~/src/tools, just the main branch is fine.", "git_clone", "a verb acting on a literal acts on what no tool names"},
	})
	expectFound(t, c4, []foundCase{
		{"I trashed message 18ab2 by mistake, please get it back.", "gmail_untrash_message", "a thing got back is restored: untrashed"},
		{"My assistant will handle my inbox while I'm away — give him access to my account.", "gmail_add_delegate", "access given is a delegate"},
		{"Story 88 is too big, split out a child story for the UI part.", "shortcut_stories_create_subtask", "a child story is a subtask"},
		{"Customer ctm_9 got charged twice, give them their money back on txn_7.", "paddle_create_adjustment", "money given back is a refund, which an adjustment makes"},
		{"Oops, I binned the hotel receipt email by accident, it's message 18d3a1bc. Can you get it back?", "gmail_untrash_message", "a thing got back is restored: untrashed"},
		{"What's about to run out so I can reorder?", "woocommerce_woo_reports_low_stock", "running out is stock"},
		{"Draft r-991 looks good, fire it off.", "gmail_send_draft", "firing a draft off sends it"},
		{"Put me on story 881, I'll take it.", "shortcut_stories_assign_current_user", "putting me on a story assigns me"},
		{"Who turned the beta-banner flag off in production?", "launchdarkly_get_audit_log_entries", "who changed something asks for its audit log"},
		{"How has code coverage on api-server changed since March?", "sonarqube_measures_history", "how a measure moved asks for its history"},
		{"Call https://erp.example.com/hook every time an order is placed in the shop.", "woocommerce_woo_webhooks_create", "something called whenever an event happens is a webhook"},
		{"Put 'Our office is closed on Monday' into German.", "deepl_translate_text", "a language named asks for a translation"},
		{"Which items are running low in the shop?", "woocommerce_woo_reports_low_stock", "running low is stock"},
		{"Turn on an out of office reply until the 9th.", "gmail_update_vacation", "out of office is the vacation responder"},
		{"Story 310 is too big; create a child story for the API part.", "shortcut_stories_create_subtask", "a child story is a subtask"},
		{"Story 45 is blocked by story 44, record that.", "shortcut_stories_add_relation", "one item blocked by another is a relation"},
		{"Finding AZ-3 is bogus, it's test code. Mark it so.", "sonarqube_markissuefalsepositive", "a bogus finding is a false positive"},
		{"Create a SPRING code in Paddle that takes 15% off.", "paddle_create_discount", "a code that takes money off is a discount, and what the request acts on"},
		{"What would sub_01x be charged if we moved it to the yearly plan? Don't change anything.", "paddle_preview_subscription_update", "what would happen, without doing it, is a preview"},
		{"Write a reply to Ana's email saying yes, but don't send it yet.", "gmail_create_draft", "written but not sent is a draft"},
		{"Plan a sprint called 'Sprint 9' from May 2 to May 16.", "shortcut_iterations_create", "a sprint is an iteration"},
		{"Put the runbook in a doc in Shortcut.", "shortcut_documents_create", "a doc is a document"},
		{"Order 5521 came damaged, give the buyer back $12.", "woocommerce_woo_orders_refunds_create", "orders_refunds_create makes refunds: a verb's word after a noun is a noun"},
	})
	// Written after the twelfth round's second look, on the misses of
	// three fresh sets.
	expectFound(t, c3, []foundCase{
		{"The blog feels sluggish lately, what can I do to speed it up?", "wordpress_wp_performance_optimize", "slow asks for performance"},
		{"My changes are half done; put them aside so I can switch branches.", "git_stash", "work put aside is stashed"},
		{"Put the demo Supabase project to sleep until January.", "supabase_pause_project", "put to sleep is paused"},
		{"How much money is in our Stripe account?", "stripe_retrieve_balance", "money held is a balance"},
		{"Can our service account actually edit spreadsheet 1Zz? I keep hitting permission errors when I write to it.", "google_sheets_sheets_check_access", "a permission error asks about access"},
		{"Count the rows in the invoices table of my Supabase project.", "supabase_execute_sql", "rows counted in a table are a SQL query"},
		{"Comment 77 is a bot ad, flag it as junk.", "wordpress_wp_spam_comment", "junk is spam"},
		{"Shift card 61ab over to the Review list.", "trello_move_card", "shifting a card moves it"},
	})
	expectFound(t, c4, []foundCase{
		{"Roll the 'fast-cart' flag out to 30% of users in production.", "launchdarkly_update_feature_flag", "a share of users is a rollout"},
		{"Newsletters from news@site.com should skip my inbox and get the 'Later' label.", "gmail_create_filter", "mail handled on its own is a filter"},
		{"Start charging 7.5% sales tax on orders shipped to Texas.", "woocommerce_woo_tax_rates_create", "a percentage of tax is a tax rate"},
		{"Add 6% GST for Alberta to the store's taxes.", "woocommerce_woo_tax_rates_create", "a percentage of tax is a tax rate"},
		{"Bump dark-banner in the web project up to 30% of users in production.", "launchdarkly_update_feature_flag", "a share of users is a rollout"},
		{"This reply sounds too blunt, can you make it sound more polite? 'No, we can't.'", "deepl_rephrase_text", "said another way is a rephrasing"},
		{"Open a ticket for the checkout timeout and give it to the Web team.", "shortcut_stories_create", "a ticket is a story"},
		{"How much did we sell in March?", "woocommerce_woo_reports_sales", "selling is sales"},
		{"Is the PayPal gateway enabled in the store?", "woocommerce_woo_payment_gateways_list", "a service's gateway is a part of the store"},
	})
	// Written after the thirteenth round, on the misses of seen sets.
	expectFound(t, c3, []foundCase{
		{"Record a $1,200 debit to rent expense and a credit to cash for May.", "xero_create_manual_journal", "a debit and a credit are a journal entry"},
	})
	expectFound(t, c4, []foundCase{
		{"Permanently wipe these two spam messages, don't just bin them: 18e1, 18e2.", "gmail_batch_delete_messages", "gone for ever, not to the trash, is a deletion"},
		{"Which Google account is this mail connection using?", "gmail_get_profile", "which account asks for the profile"},
		{"Is the legacy-nav flag still used anywhere, or can we rip it out?", "launchdarkly_get_code_references", "whether a thing is still used asks for its references"},
		{"Make this sound more formal before I send it to the client: 'cant make it, sorry'.", "deepl_rephrase_text", "a clause opened by before is the context, not the ask"},
	})
	// Written in the fifteenth round, on the misses of seen sets.
	expectFound(t, c3, []foundCase{
		{"We've slid down the rankings since Google's spring update; give the whole blog an SEO audit.", "wordpress_wp_seo_site_audit", "Google alone is the search engine, not the Google Sheets server"},
		{"Log a $9.80 spend on train fares from the business cheque account today.", "xero_create_bank_transaction", "logging a spend records one, it reads no log"},
		{"Bill Globex for 8 hours of design work at $120 an hour.", "xero_create_invoice", "billing someone is an invoice"},
	})
	expectFound(t, c4, []foundCase{
		{"Hand Sonar issue AYz77 over to mchen.", "sonarqube_assignissue", "handing an issue over to someone assigns it"},
		{"Put this into German for the Berlin office, they asked twice already: 'The office is closed on Friday for the move.'", "deepl_translate_text", "a tool whose name says what is implied fits a long request"},
	})
	// Written in the sixteenth round, on the misses of seen sets.
	expectFound(t, c1, []foundCase{
		{"please add these numbers: 4, 9 and 12", "everything_get_sum", "adding numbers is summing them, not creating anything"},
		{"Associate deal 42 with the Acme company in HubSpot.", "hubspot_batch_create_associations", "associate is the verb of associations"},
		{"uncheck the 'buy milk' task in Todoist, I haven't bought it yet", "todoist_reopen_tasks", "a completion undone is a reopening"},
		{"any ramen near me?", "brave_search_brave_local_search", "what is near is a local place"},
		{"where can I get a haircut around here", "google_maps_maps_search_places", "what is around here is a local place"},
		{"rename notes.txt to todo.txt", "desktop_commander_move_file", "move is the verb of moved; its summary says rename"},
	})
	expectFound(t, c2, []foundCase{
		{"tasks of an asana project", "asana_get_tasks_for_project", "common words fit a tool of the family the query names when they say more than half its name"},
	})
	expectFound(t, c3, []foundCase{
		{"Archive the 'Backlog 2023' list (id 5e1f) on our team board, we've finished with it.", "trello_archive_list", "an id is no object the action must meet"},
	})
	expectFound(t, c4, []foundCase{
		{"dark-mode flag change history in LaunchDarkly", "launchdarkly_get_audit_log_entries", "a verb before history is its modifier"},
		{"Add http://localhost:8080/cb to the allowed callback URLs of our Auth0 app, client id XyZ1.", "auth0_update_application", "a request only to change is no reading tool's"},
		{"download the attachment from that email", "gmail_get_attachment", "downloading a thing gets it"},
		{"Write an Auth0 action that blocks logins from disposable email domains.", "auth0_create_action", "writing a thing creates it"},
		{"How much did the store bring in over the last quarter?", "woocommerce_woo_reports_sales", "money brought in is sales"},
		{"Send a fake order.created webhook to our staging endpoint so we can test the handler.", "paddle_create_simulation", "a fake event is a simulation"},
	})
	expectFound(t, c1, []foundCase{
		{"What's the latest news on the Artemis moon mission?", "brave_search_brave_web_search", "the news is a web search"},
		{"What did I do on GitLab last week? I need it for my review.", "gitlab_list_events", "what I did is my activity"},
		{"In /etc/app/settings.ini flip VERBOSE = 1 to VERBOSE = 0.", "desktop_commander_edit_block", "a value flipped in a named file is an edit"},
	})
	expectFound(t, c2, []foundCase{
		{"What's on my calendar next Monday afternoon?", "google_calendar_list_events", "what is on a calendar are its events"},
		{"I spent two hours on the checkout bug today, log that against it in Plane.", "plane_create_worklog", "time logged against an item is a worklog"},
		{"Add an 'In Review' column to the Website board in Asana (project 1200).", "asana_create_section", "a column on a board is a section"},
	})
	expectFound(t, c3, []foundCase{
		{"How much does Wayne Enterprises owe us right now?", "xero_list_aged_receivables_by_contact", "what they owe us is a receivable"},
	})
	// Written in the seventeenth round, on the misses of seen sets.
	expectFound(t, c1, []foundCase{
		{"Close #412 in web/app, the fix shipped on Tuesday.", "gitlab_update_issue", "a tracker's number (#412) is an issue's"},
		{"Set issue 7 as blocking issue 9 in the api project.", "gitlab_create_issue_link", "one issue as blocking another is a relation between them"},
		{"What exactly did commit 9c1e2f7 change in core/api?", "gitlab_get_commit_diff", "what a commit changed is its diff"},
		{"Who still has to approve MR 77 in web/app?", "gitlab_get_merge_request_approval_state", "who still has to approve asks for the approvals"},
		{"Can I get my own copy of gitlab-org/cli under my namespace to experiment?", "gitlab_fork_repository", "one's own copy of a repository is a fork"},
		{"lat lng of 221B Baker Street, London", "google_maps_maps_geocode", "the lat lng of an address is a geocode"},
		{"let me know when the status page at https://status.acme.io changes", "firecrawl_monitor_create", "told when something changes is a monitor"},
		{"Cut a branch hotfix/tax-fix from main in shop/web.", "gitlab_create_branch", "a repository's path (shop/web) is a value, not the words shop and web"},
	})
	expectFound(t, c2, []foundCase{
		{"carry over the unfinished issues to the next cycle in Plane", "plane_transfer_cycle_issues", "unfinished work carried over is a transfer"},
	})
	expectFound(t, c3, []foundCase{
		{"undo the last commit, it had the wrong message", "git_reset", "a commit undone is a reset"},
		{"freeze the first two rows of the Budget tab", "google_sheets_sheets_update_sheet_properties", "frozen rows are a sheet's properties"},
		{"read the cell range B2:D9 from the Leads sheet", "google_sheets_sheets_get_values", "a range of cells read is its values"},
		{"list the tabs of spreadsheet 1AbCdE", "google_sheets_sheets_get_metadata", "a spreadsheet's tabs are its metadata"},
		{"Set the alt text of image 55 to 'Sunset over the bay'.", "wordpress_wp_update_media", "an image is a media item"},
	})
	// Written in the eighteenth round.
	expectFound(t, c1, []foundCase{
		{"fork acme/widgets", "gitlab_fork_repository", "fork is one precise action; acme/widgets, whose words the catalog lacks, is a repository's path"},
	})
	// A server whose whole vocabulary fits the request lends its tools
	// rank (serverScores): an inbox is mail's, lines touched a code
	// scanner's blame.
	expectFound(t, c4, []foundCase{
		{"look through my inbox for messages from Paul", "gmail_list_messages", "an inbox is the mail server's word, though no one tool says it"},
		{"Who last touched lines 5 to 9 of src/main.go in the core project?", "sonarqube_scm_blame", "who touched lines is the code server's blame"},
	})
	// The fifth catalog: what its first three sets missed.
	expectFound(t, c5, []foundCase{
		{"How do I make a board private in monday.com?", "monday_get_monday_knowledge", "how to do something asks the documentation"},
		{"I need a view-only link to the Q3 deck that anyone can open.", "onedrive_create_drive_item_share_link", "a link anyone can open is a share link"},
		{"Import the ISO at https://example.com/debian.iso as a custom DigitalOcean image in nyc3.", "digitalocean_image_create", "importing a thing creates it"},
		{"turn on backups for droplet 991", "digitalocean_enable_backups_droplet", "turning on is enabling"},
		{"turn off droplets tagged staging", "digitalocean_shutdown_droplets_tag", "turning off is a shutdown"},
		{"Ring +15005550006 from our main line and read out the message at https://example.com/twiml/alert.xml.", "twilio_twilioapiv2010_createcall", "ringing a number is a call"},
		{"Release the number +15005550006 from our account, we don't need it.", "twilio_twilioapiv2010_deleteincomingphonenumber", "a phone number is a literal of its kind, not an unknown word"},
		{"What messages did +15005550006 send us today?", "twilio_twilioapiv2010_listmessage", "a phone number is a literal of its kind, not an unknown word"},
		{"Look up the buyer jill@example.com in the shop.", "shopify_get_customers", "a buyer is a customer"},
		{"Shut down every droplet tagged batch until Monday.", "digitalocean_shutdown_droplets_tag", "until Monday is a date, not the monday.com server"},
	})
	// A request the gate's model turns away though the ranking finds its
	// tool first: a known miss of the model (its tool's name meets few of
	// its words, and it names a family, as requests no tool serves often
	// do). The rephrasing is checked on the ranking; when Search finds it,
	// the case goes back among the found ones.
	{
		q, want := "Dig through my OneDrive for the signed NDA from Globex.", "onedrive_search_onedrive_files"
		if ranked := c5.Ranked(q); len(ranked) == 0 || ranked[0].Tool.Name != want {
			t.Errorf("rank(%q) = %v, want %s first (digging through is searching)", q, names(ranked), want)
		}
		if hits, _ := sure(c5.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v: the gate now lets it through; move it back to the found cases", q, names(hits))
		}
	}
	if hits, _ := sure(c2.Search(bg, "Mark Grafana incident 88 as resolved, the fix is out.", 3, nil)); len(hits) != 0 {
		t.Errorf("mark a Grafana incident resolved: %v, want nothing (mark is an action, and no Grafana tool updates an incident)", names(hits))
	}
	for _, q := range []string{"post message to slack channel", "google calendar create event", "list auth0 users"} {
		if hits, _ := sure(c4.Search(bg, q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want nothing (a service typed in lower case; a listing no tool of the named server does)", q, names(hits))
		}
	}
	// A version in a range of commits marks no tag.
	if hits, _ := hitsOf(c3.Search(bg, "Run git bisect between v1.2 and HEAD to find the bad commit.", 3, nil)); found(hits, "git_tag") {
		t.Errorf("git bisect between versions: %v, want no git_tag among the first three", names(hits))
	}
	// What a request implies does not make a near miss an answer.
	for _, c := range []struct {
		ix     *search.Index
		q, why string
	}{
		{c3, "Email invoice INV-0042 to the customer from Xero.", "emailing one is sending it, which no Xero tool does"},
	} {
		if hits, _ := sure(c.ix.Search(bg, c.q, 3, nil)); len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want nothing (%s)", c.q, names(hits), c.why)
		}
	}
}

// TestSourceSpelling: an upstream tool's camelCase name, which its catalog
// name folds into one word (scan_markissuefalsepositive), is searched by
// the words its server wrote.
func TestSourceSpelling(t *testing.T) {
	mk := func(name, desc string) *tools.Tool {
		return &tools.Tool{Name: "scan_" + strings.ToLower(name), SourceName: name, Source: "scan", Description: desc}
	}
	ix := search.New([]*tools.Tool{
		mk("markIssueFalsePositive", "Flags a finding."),
		mk("listProjects", "Lists the projects."),
		mk("getMeasures", "Returns the measures of a component."),
		mk("addCommentToIssue", "Adds text to a finding."),
	})
	if hits, _ := hitsOf(ix.Search(bg, "mark issue as false positive", 3, nil)); len(hits) == 0 || hits[0].Tool.Name != "scan_markissuefalsepositive" {
		t.Errorf("mark issue as false positive: %v, want scan_markissuefalsepositive first", names(hits))
	}
	if hits, _ := hitsOf(ix.Search(bg, "add a comment to issue AX-3", 3, nil)); len(hits) == 0 || hits[0].Tool.Name != "scan_addcommenttoissue" {
		t.Errorf("add a comment to an issue: %v, want scan_addcommenttoissue first", names(hits))
	}
}
