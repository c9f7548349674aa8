package search

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// rephrasings turn everyday phrasings into the words tools say: mostly a
// phrasal verb whose particle stands apart from it ("get the email back",
// "fire the draft off"), keeping the words between, its object; also
// "make a copy of", "put … on my calendar", P&L.
var rephrasings = []struct {
	re   anchoredRE // tried only on a query that has one of its anchors
	repl string
	// notSpeaker: the rephrasing does not apply when the words between
	// are the speaker ("get us back on v2" is no restoring).
	notSpeaker bool
}{
	// Money given back is a refund; a thing got back, restored.
	{anchored("back")(`(?i)\b(?:give|gives|giving|gave|pay)\s+((?:[\w'$.,-]+\s+){0,5}?)back\b`), "refund $1", false},
	// Not "bring back the content" (return it), nor "get us back on v2".
	{anchored("back")(`(?i)\b(?:get|bring|put)\s+((?:[\w'-]+\s+){1,4}?)back\b(?:\s+online)?`), "restore $1", true},
	{anchored("fire")(`(?i)\bfire\s+((?:[\w'-]+\s+){0,3}?)off\b`), "send $1", false},
	{anchored("put")(`(?i)\bput\s+(me|us)\s+on\b`), "assign $1 to", false},
	// "Put Sam on the card": a person given the item.
	{anchored("put")(`\b[Pp]ut\s+([A-Z][a-z]+)\s+on\s+(the|this|that|our|my|story|card|ticket|issue|task)\b`), "assign $1 to $2", false},
	// A note on an item is a comment on it.
	{anchored("note")(`(?i)\b(?:leave|drop|add|put|post|write)\s+(?:a|an)\s+(?:quick\s+|short\s+)?note\s+on\b`), "add a comment on", false},
	{anchored("cop")(`(?i)\bmake\s+(?:a\s+)?cop(?:y|ies)\s+of\b`), "duplicate", false},
	// "Make the header bold", "make the repo public": a change to it.
	{anchored("make")(`(?i)\bmake\s+((?:the|it|this|that|these|those|them|my|our|its|row|column|cells?)\s+(?:[\w'!:-]+\s+){0,5}?)(bold|italic|public|private|visible|hidden|invisible|read-only|readonly|bigger|smaller|larger|wider|narrower|default|active|inactive|red|green|blue|orange|yellow|purple|grey|gray|black|white)\b`), "change $1 to $2", false},
	// "Plan the next sprint": making one.
	{anchored("plan")(`(?i)^(?:please\s+)?plan\s+(a|an|the|our|next)\b`), "create $1", false},
	// "Put the dentist on my calendar": an event made.
	{anchored("calendar")(`(?i)\b(?:put|pop|stick)\s+(.{1,60}?)\s+(?:on|in|into)\s+(my|our|the)\s+calendar\b`), "create event $1 on $2 calendar", false},
	// "Roll the flag out to 20%": a rollout, whatever lies between.
	{anchored("roll")(`(?i)\broll\s+((?:[\w'-]+\s+){0,4}?)out\b`), "update rollout of $1", false},
	// Abbreviations that split into letters.
	{anchored("&")(`(?i)\bP\s?&\s?L\b`), "profit and loss", false},
	// "Log a bug", "file a ticket", "log that we spent …": recording one.
	{anchored("log", "file", "raise", "lodge")(`(?i)(^|[.!?]\s+)(?:please\s+)?(?:log|file|raise|lodge)\s+(a|an|that|this|one)\b`), "${1}create $2", false},
	// "Hand the issue over to Sam": giving it to someone.
	{anchored("over")(`(?i)\b(?:hand|pass|give)\s+((?:[\w'-]+\s+){1,5}?)over\s+to\b`), "assign $1 to", false},
	// Adding numbers up is summing them ("add two numbers", "add up the
	// totals"), not creating anything ("add the values to column B"
	// appends them).
	{anchored("add")(`(?i)\badd\s+(?:up\s+((?:[\w'-]+\s+){0,3}?[\w'-]+)|((?:two|three|some|these|those|the|a\s+few|all)\s+(?:of\s+the\s+)?)?(numbers|figures))\b`), "sum $1$2$3", false},
	// A completion undone is a reopening ("undo completing the task",
	// "un-complete it"; not "uncheck the box" on a page).
	{anchored("undo", "revers", "revert", "un-", "uncomplet", "untick", "unfinish")(`(?i)\b(?:(?:undo|reverse|revert)\s+(?:the\s+|my\s+)?(?:complet\w*|clos(?:e|ed|ing)|finish\w*|check(?:ing|ed)?\s+off|tick(?:ing|ed)?\s+off)|un-?(?:complete|completed|tick|ticked|finish))\b`), "reopen", false},
	// "Uncheck the 'buy milk' task": a task reopened (a box on a page is
	// only unchecked).
	{anchored("uncheck", "un-check")(`(?i)\bun-?check(?:ed)?\s+((?:the|that|this|my)\s+)?('[^']*'\s+|"[^"]*"\s+)?(task|todo|to-do|item)s?\b`), "reopen task", false},
	// "Ring +44 …", "dial …": a phone call.
	{anchored("ring", "dial")(`(?i)(^|[.!?]\s+)(?:please\s+)?(?:ring|dial)\s`), "${1}make a phone call to ", false},
	// "Email Sam the summary": sending one.
	{anchored("mail", "message")(`(?i)^(?:please\s+)?(?:e-?mail|message)\s`), "send email to ", false},
}

// rephrase applies rephrasings to a query.
func rephrase(q string) string {
	lower := strings.ToLower(q)
	for _, r := range rephrasings {
		if !r.re.anchoredIn(lower) {
			continue
		}
		re := r.re.re
		q = re.ReplaceAllStringFunc(q, func(m string) string {
			if sub := re.FindStringSubmatch(m); r.notSpeaker && len(sub) > 1 {
				if f := strings.Fields(strings.ToLower(sub[1])); len(f) > 0 && (f[0] == "me" || f[0] == "us") {
					return m
				}
			}
			return re.ReplaceAllString(m, r.repl)
		})
	}
	return q
}

// cue is a request as concepts read it: lower-cased and as words, as
// written, and its literals' kinds.
type cue struct {
	lower, query string
	words, kinds []string
}

// any reports whether the request says one of phrases, each beginning a
// word ("ping" is not in "shipping"; "earlier version" is in "earlier
// versions").
func (c *cue) any(phrases ...string) bool {
	for _, p := range phrases {
		for i := 0; ; {
			j := strings.Index(c.lower[i:], p)
			if j < 0 {
				break
			}
			if r, _ := utf8.DecodeLastRuneInString(c.lower[:i+j]); i+j == 0 || !isWordRune(r) {
				return true
			}
			i += j + 1
		}
	}
	return false
}

// concepts are what a request implies in everyday words but says in none
// that tools use: "who changed the due date?" asks for a history, "put
// this into French" for a translation. Each is a set of terms (stems),
// any of which a tool may say; a request that implies one gets it as a
// hint (see Search).
var concepts = []struct {
	terms []string
	says  func(c *cue) bool
}{
	// Who did something, what happened: a history, a log, an audit trail.
	{Terms("history log audit blame activity revision event"), func(c *cue) bool {
		// Not "what changed between v1 and v2": a diff.
		return asksWhoDid(c.words) || c.any("what happened", "what's happened", "what has happened", "what's been happening", "what has been happening",
			"what went wrong", "what's been going on", "what has been going on") ||
			strings.Contains(c.lower, "what changed") && !strings.Contains(c.lower, "between")
	}},
	// How a measure moved over time: its history.
	{Terms("history trend"), func(c *cue) bool {
		return c.any("over time", "trend", "going up or down", "gone up or down") ||
			howMoved.match(c.lower)
	}},
	// Something called whenever an event happens: a webhook.
	{Terms("webhook hook subscription trigger"), func(c *cue) bool {
		return c.any("whenever", "every time", "each time", "any time") && (contains(c.kinds, "url") || c.any("ping", "notify", "call", "post to", "hit"))
	}},
	// A language named: a translation.
	{Terms("translate language"), func(c *cue) bool {
		ws := strings.FieldsFunc(c.query, func(r rune) bool { return !isWordRune(r) })
		for i, w := range ws {
			if (languages[w] || w == "English") && i > 0 && intoWords[strings.ToLower(ws[i-1])] {
				return true
			}
		}
		return false
	}},
	// A child of an item is its sub-item ("a child story under it").
	{Terms("subtask subissue subpage sub"), func(c *cue) bool {
		return childItem.match(c.lower)
	}},
	// One item waits on another: a relation between them.
	{Terms("relation dependency link block"), func(c *cue) bool {
		return c.any("blocked by", "blocks ", "as blocking", "depends on", "dependent on", "can't start until", "cannot start until", "can not start until", "waiting on")
	}},
	// A finding that is wrong: a false positive to dismiss.
	{Terms("false positive dismiss"), func(c *cue) bool {
		return c.any("bogus", "false alarm", "false positive", "not a real issue", "not a real bug", "not a real problem", "not an actual")
	}},
	// Letting someone in: sharing, a grant, a delegate.
	{Terms("share grant permission delegate collaborator invite"), func(c *cue) bool {
		return giveAccess.match(c.lower)
	}},
	// Money off: a discount.
	{Terms("discount coupon promotion"), func(c *cue) bool {
		return strings.Contains(c.query, "% off") || c.any("promo code", "coupon code", "discount code", "percent off")
	}},
	// What would happen, without doing it: a preview.
	{Terms("preview estimate simulate simulation"), func(c *cue) bool {
		return c.any("what would", "what'd", "how much would", "would it cost", "dry run", "dry-run", "don't change anything", "do not change anything", "nothing real", "just a quote", "without changing")
	}},
	// Written but not sent: a draft.
	{Terms("draft"), func(c *cue) bool {
		return c.any("don't send", "do not send", "without sending", "not send it", "before it goes out", "before sending", "look it over")
	}},
	// Earlier versions of a thing: its revisions.
	{Terms("revision history"), func(c *cue) bool {
		return c.any("earlier version", "previous version", "older version", "old version", "version history", "past version")
	}},
	// A column added to a table: a schema change.
	{Terms("migration schema alter"), func(c *cue) bool {
		return addColumn.match(c.lower)
	}},
	// Rows added at the end: an append.
	{Terms("append"), func(c *cue) bool {
		return appendRow.match(c.lower)
	}},
	// A login for someone is an account.
	{Terms("user account"), func(c *cue) bool {
		return aLogin.match(c.lower)
	}},
	// What is near: a local place.
	{Terms("local place"), func(c *cue) bool {
		return c.any("near me", "nearby", "near here", "around here", "close by", "in my area", "closest", "nearest")
	}},
	// What I did: my activity, events.
	{Terms("activity event"), func(c *cue) bool {
		return c.any("what did i do", "what did i actually do", "what have i done", "what i did", "what i've done", "what i have done", "my activity", "my recent activity", "what did i get done", "what i got done")
	}},
	// A value changed in a named file: an edit of the file.
	{Terms("edit"), func(c *cue) bool {
		return contains(c.kinds, "file") && c.any("change ", "flip ", "replace ", "swap ", "bump ")
	}},
	// Money owed, late: an aged receivable or payable.
	{Terms("aged receivable payable"), func(c *cue) bool {
		return c.any("owe us", "owes us", "owed to us", "we owe", "do we owe", "owe money", "behind on pay")
	}},
	// A link others can open: a share link.
	{Terms("share link"), func(c *cue) bool {
		return c.any("shareable link", "sharable link", "view-only link", "view only link", "link anyone", "link that anyone", "public link", "sharing link")
	}},
	// How to do something: documentation, help (not how to get
	// somewhere: directions).
	{Terms("documentation docs knowledge help guide"), func(c *cue) bool {
		howTo := strings.HasPrefix(c.lower, "how do i ") || strings.HasPrefix(c.lower, "how can i ") || strings.HasPrefix(c.lower, "how do you ")
		return howTo && !c.any("get from", "get to", "get there", "go from", "go to", "drive", "walk", "travel") ||
			c.any("what does the documentation say", "according to the docs", "check the docs", "current docs", "official docs")
	}},
	// What is on a calendar: its events.
	{Terms("event meeting appointment"), func(c *cue) bool {
		return c.any("on my calendar", "on my schedule", "on the calendar", "in my calendar", "on our calendar", "my schedule", "my agenda")
	}},
	// Time spent, logged: a worklog, a timesheet.
	{Terms("worklog timesheet time"), func(c *cue) bool {
		return c.any("log time", "log that time", "log the time", "log hours", "log my hours", "hours on", "minutes on", "time against", "that against", "my hours", "her hours", "his hours", "hours for last week", "hours a day")
	}},
	// A column on a board: a section, a list.
	{Terms("section list"), func(c *cue) bool {
		return c.any("column") && c.any("board")
	}},
	// What a commit or a merge request changed: its diff.
	{Terms("diff change"), func(c *cue) bool {
		return c.any("commit", "mr ", "pr ", "merge request", "pull request") && c.any("what ") && c.any("change")
	}},
	// Who has approved, who still must: the approvals' state.
	{Terms("approval"), func(c *cue) bool {
		return c.any("approv", "sign off", "signed off", "give the ok") && c.any("who still", "who needs to", "who has to", "who else", " yet", "still need", "still has to")
	}},
	// A copy of a repository of one's own: a fork.
	{Terms("fork"), func(c *cue) bool {
		return c.any("my own copy", "our own copy", "own copy of", "under my namespace", "into my namespace", "to my namespace", "under my username", "under my account", "into my personal namespace", "my personal namespace", "my own namespace")
	}},
	// Told when something changes: a monitor, a watch.
	{Terms("monitor watch subscribe"), func(c *cue) bool {
		return c.any("notify me when", "alert me when", "notified when", "let me know when", "let me know whenever", "tell me when", "watch for changes", "watch it for changes", "keep an eye on")
	}},
	// A commit undone: a reset.
	{Terms("reset revert"), func(c *cue) bool {
		return c.any("undo my last commit", "undo last commit", "undo the last commit", "undo that commit", "undo my commit", "uncommit")
	}},
	// Rows or columns kept in view: a sheet's properties.
	{Terms("properties"), func(c *cue) bool {
		return c.any("freeze", "frozen", "unfreeze")
	}},
	// The cells of a range read: their values.
	{Terms("values"), func(c *cue) bool {
		return c.any("cell range", "range of cells", "cells from", "cell values", "read cells", "read a range", "read the range")
	}},
	// The tabs of a spreadsheet: its metadata.
	{Terms("metadata"), func(c *cue) bool {
		return c.any("tabs in", "tabs of", "sheet tabs", "tab names", "list tabs", "list the tabs", "which tabs", "what tabs")
	}},
	// Money brought in: sales, revenue.
	{Terms("sales revenue"), func(c *cue) bool {
		return c.any("bring in", "brought in", "take in", "took in", "how much did we make", "how much we made", "how much did we sell", "how much did the shop sell", "how much did the store sell", "earned", "earnings", "turnover")
	}},
	// A fake event sent to test a handler: a simulation.
	{Terms("simulation simulate test"), func(c *cue) bool {
		return c.any("fake ", "simulate", "dummy event", "dummy webhook", "test event", "test webhook", "mock event", "mock webhook")
	}},
	// The news, what is current: a web search.
	{Terms("web search news"), func(c *cue) bool {
		return c.any("latest news", "news on ", "news about ", "look it up", "look this up", "look that up", "look something up", "google it", "search online", "search the web", "on the internet", "announcements at", "announced at")
	}},
	// Bold, colours, fonts: formatting.
	{Terms("format style"), func(c *cue) bool {
		return formatting.MatchString(c.lower)
	}},
	// Out of the way but kept: an archive.
	{Terms("archive"), func(c *cue) bool {
		return c.any("gone for good", "don't lose", "do not lose", "without deleting", "without losing", "tuck it away", "tuck them away", "not delete it", "not delete them", "don't delete it", "don't delete them")
	}},
	// A version number: a tag, a release.
	{Terms("tag release version"), func(c *cue) bool {
		// Not "between v1.4 and HEAD": a range of commits.
		return versionLiteral.match(c.query) && !strings.Contains(c.lower, "between")
	}},
	// Whether one already exists: a search.
	{Terms("search find"), func(c *cue) bool {
		return c.any("is there already", "is there a ticket", "is there an issue", "do we already have", "already exists", "already filed", "already a ticket", "already an issue")
	}},
	// Getting from one place to another: directions.
	{Terms("directions route distance"), func(c *cue) bool {
		return travel.match(c.lower)
	}},
	// How high a place is: its elevation.
	{Terms("elevation"), func(c *cue) bool {
		return c.any("how high", "altitude", "above sea level")
	}},
	// Where an address is on the map: its coordinates, a geocode.
	{Terms("geocode coordinates"), func(c *cue) bool {
		return c.any("coordinates for", "coordinates of", "lat/long", "lat long", "latitude and longitude", "lat and long", "lat lng", "lat/lng", "to lat", "for lat")
	}},
	// A sourced write-up: research.
	{Terms("research"), func(c *cue) bool {
		return c.any("with sources", "sourced", "deep-dive", "deep dive", "thorough write-up", "in-depth report", "in-depth write-up", "cite sources", "citations")
	}},
	// What is running on a machine: its processes.
	{Terms("process"), func(c *cue) bool {
		return c.any("what's running", "what is running", "hogging", "eating cpu", "eating memory", "using the most cpu", "using the most memory")
	}},
	// Things tied to one another: associations, relations.
	{Terms("association relation link"), func(c *cue) bool {
		return c.any("tied to", "associated with", "linked to", "connected to", "attached to the")
	}},
	// The best order to visit places: a route optimization.
	{Terms("optimization optimize route"), func(c *cue) bool {
		return c.any("most efficient order", "best order", "optimal order", "optimal route", "shortest route", "most efficient route", "fastest order")
	}},
	// Distance in a straight line.
	{Terms("distance"), func(c *cue) bool {
		return c.any("straight line", "as the crow flies")
	}},
	// When people are free: availability.
	{Terms("freebusy availability free busy"), func(c *cue) bool {
		return freeSlot.match(c.lower)
	}},
	// A link to give someone: a deep link, a share.
	{Terms("deeplink share"), func(c *cue) bool {
		return c.any("link i can paste", "link i can share", "link i can send", "shareable link", "link that opens", "link to share", "link to paste")
	}},
	// What is left moved on in bulk: a transfer.
	{Terms("transfer"), func(c *cue) bool {
		return moveLeftovers.match(c.lower)
	}},
	// Who answers the pager: on-call.
	{Terms("oncall schedule rotation"), func(c *cue) bool {
		return c.any("on call", "on-call", "oncall", "pager", "paging")
	}},
	// A percentile or an average: a metric query.
	{Terms("metric query"), func(c *cue) bool {
		return percentile.match(c.lower)
	}},
	// A share of users: a rollout's percentage.
	{Terms("rollout percentage targeting"), func(c *cue) bool {
		return shareOfUsers.match(strings.ToLower(c.query))
	}},
	// Mail handled on its own from now on: a filter, a rule.
	{Terms("filter rule automation"), func(c *cue) bool {
		return c.any("skip my inbox", "skip the inbox", "skips my inbox", "from now on", "automatically")
	}},
	// A percentage of tax: a tax rate.
	{Terms("rate"), func(c *cue) bool {
		return taxRate.match(strings.ToLower(c.query))
	}},
	// Text said another way: a rephrasing.
	{Terms("rephrase rewrite tone style"), func(c *cue) bool {
		return c.any("sound more", "sounds more", "more formal", "more polite", "more diplomatic", "more professional", "more confident", "less blunt", "less formal", "smooth it out", "reword", "rephrase", "rewrite this")
	}},
	// Slow: performance, to optimize.
	{Terms("performance optimize speed"), func(c *cue) bool {
		return c.any("speed it up", "speed up", "sluggish", "too slow", "so slow", "really slow", "load faster", "loads slowly")
	}},
	// Work put aside for later: a stash.
	{Terms("stash shelve"), func(c *cue) bool {
		return c.any("put them aside", "put it aside", "set aside", "put aside", "park my changes", "shelve")
	}},
	// Put to sleep: paused.
	{Terms("pause suspend"), func(c *cue) bool {
		return c.any("to sleep", "hibernate", "on hold", "on ice")
	}},
	// Money held: a balance.
	{Terms("balance"), func(c *cue) bool {
		return c.any("how much money", "how much cash", "money is sitting", "money sitting", "funds available", "available funds")
	}},
	// Whether one may: access, permission.
	{Terms("access permission"), func(c *cue) bool {
		return c.any("permission error", "permission denied", "access denied", "do we have access", "have permission", "not allowed to")
	}},
	// Rows counted in a table: a SQL query.
	{Terms("sql query"), func(c *cue) bool {
		return rowsInTable.match(c.lower)
	}},
	// Gone for ever, not to the trash: a deletion.
	{Terms("delete permanent"), func(c *cue) bool {
		return c.any("permanently", "gone forever", "not the trash", "not to the trash", "don't just bin", "don't just trash", "not just trash", "not just archive", "don't just archive")
	}},
	// Which account this is: the profile, the current user.
	{Terms("profile current whoami"), func(c *cue) bool {
		return whichAccount.match(c.lower)
	}},
	// Where a thing is still used: its references.
	{Terms("reference usage"), func(c *cue) bool {
		return c.any("used anywhere", "still used", "still in use", "where is it used", "rip it out", "safe to remove", "safe to delete")
	}},
	// A debit and a credit: a journal entry.
	{Terms("journal"), func(c *cue) bool {
		return strings.Contains(c.lower, "debit") && strings.Contains(c.lower, "credit")
	}},
	// Running out: stock.
	{Terms("stock inventory"), func(c *cue) bool {
		return c.any("run out", "running out", "ran out", "running low", "out of stock", "sold out", "selling out")
	}},
	// Billing someone for something: an invoice, a charge.
	{Terms("invoice charge bill"), func(c *cue) bool {
		return billSomeone.match(c.lower)
	}},
	// Away from work: an automatic reply.
	{Terms("vacation autoresponder away"), func(c *cue) bool {
		return c.any("out of office", "out-of-office", "auto-reply", "autoreply", "auto reply", "away message", "automatic reply", "automatic replies")
	}},
}

// howMoved asks how a measure moved ("how has coverage changed").
var howMoved = anchored("how ")(`\bhow (?:has|have|did)\b.*\b(?:changed|moved|trended|evolved|grown|dropped|improved)\b`)

// childItem says a child of an item.
var childItem = anchored("child")(`\bchild\s+(?:story|stories|task|tasks|issue|issues|ticket|tickets|item|items|page|pages|card|cards|work item)\b`)

// giveAccess says letting someone in ("give her access to my account").
var giveAccess = anchored("access")(`\b(?:give|giving|grant|granting|let)\s+(?:\S+\s+){0,3}?access\b`)

// addColumn says a column added to (or dropped from) a table.
var addColumn = anchored("column")(`\b(?:add|adding|drop|dropping|rename|renaming)\b.*\bcolumn\b.*\btable\b`)

// appendRow says rows added at the end of a table.
var appendRow = anchored("bottom", "end", "row", "line")(`\b(?:add|adding|put|stick|insert)\b.*\b(?:to|at|onto)\s+the\s+(?:bottom|end)\b|\b(?:add|adding)\s+(?:a|another|one|two|three|\d+)\s+(?:new\s+)?(?:rows?|lines?)\b`)

// aLogin says a login given to someone: an account.
var aLogin = anchored("login", "log-in")(`\b(?:a|an|new|author|admin|editor)\s+(?:login|log-in)\b`)

// billSomeone says a customer billed ("bill Acme for 10 hours", "bill
// sub_01 a one-off fee"), the verb opening a sentence.
var billSomeone = anchored("bill")(`(?:^|[.!?]\s+)(?:please\s+)?bill\s+(?:\S+\s+){1,4}?(?:for|a|an)\b`)

// formatting says how text looks.
var formatting = regexp.MustCompile(`\b(?:bold|italic|italics|underline|strikethrough|font|fonts|background colou?r|text colou?r|(?:light|dark)\s+(?:grey|gray|blue|green|red|yellow))\b`)

// versionLiteral is a version number (v2.0.0, 1.4.0).
var versionLiteral = anchored(".")(`\bv?\d+\.\d+\.\d+\b|\bv\d+\.\d+\b`)

// travel says getting from one place to another.
var travel = anchored(" from ")(`\b(?:drive|driving|bike|biking|cycle|cycling|walk|walking|commute|transit|get|go|travel|fly|ride)\b.*\bfrom\b.+\bto\b`)

// freeSlot says a time when people are free.
var freeSlot = anchored("free")(`\bwhen\b.*\b(?:are|is|am)\s+(?:both\s+)?free\b|\bfree\s+(?:slot|time|window)\b|\b(?:slot|window|time)\b.*\bboth\b.*\bfree\b`)

// moveLeftovers says what is left moved on in bulk.
var moveLeftovers = anchored("everything", "whatever", "leftover", "left over", "the rest", "roll", "unfinished", "carry", "incomplete")(`\b(?:move|shift|roll|carry|bring)\b.*\b(?:everything|whatever|leftovers|left over|the rest|unfinished|incomplete)\b|\b(?:roll|carry)(?:s|ed|ies|ied)?\s+over\b`)

// percentile says a percentile or an average of a measure.
var percentile = anchored("p5", "p7", "p9", "percentile", "average", "avg")(`\bp(?:50|75|90|95|99|999)\b|\bpercentile\b|\baverage\b|\bavg\b`)

// shareOfUsers says a share of a product's users ("20% of users").
var shareOfUsers = anchored("%")(`\d+(?:\.\d+)?\s?%\s+of\s+(?:users|traffic|people|customers|requests|accounts|visitors|the users)\b`)

// taxRate says a percentage of a tax ("8.875% sales tax", "13% HST").
var taxRate = anchored("%")(`\d+(?:\.\d+)?\s?%\s+(?:\w+\s+){0,2}(?:tax|vat|gst|hst|pst)\b|\b(?:tax|vat|gst|hst|pst)\b.*\d+(?:\.\d+)?\s?%`)

// rowsInTable says rows of a database table ("count the rows in the
// orders table").
var rowsInTable = anchored("row")(`\brows\s+(?:are\s+)?(?:in|of)\s+(?:the\s+|my\s+|our\s+)?[\w.]+\s+table\b|\bcount\s+(?:the\s+)?rows\b`)

// whichAccount asks which account a connection uses.
var whichAccount = anchored("account", "logged in", "signed in", "who am i")(`\b(?:which|what)\s+(?:\w+\s+)?account\b|\blogged\s+in(?:to|\s+as)\b|\bsigned\s+in\s+as\b|\bwho\s+am\s+i\b`)

// languages are the names of widely spoken languages, capitalized.
var languages = toSet(`French German Spanish Italian Portuguese Dutch Swedish Norwegian Danish Finnish Polish Czech Russian Ukrainian Greek Turkish Arabic Hebrew Hindi Japanese Chinese Mandarin Korean Vietnamese Thai Indonesian`)

// intoWords, before a language's name, say a text is in it or goes into
// it ("put this into French"; not "an Italian place").
var intoWords = toSet(`into in to from`)

// asksWhoDid reports whether words ask who did something: "who" and a
// verb in the past ("who changed", "who last touched", "who wrote").
func asksWhoDid(ws []string) bool {
	for i, w := range ws {
		if w != "who" {
			continue
		}
		for j := i + 1; j < len(ws) && j <= i+3; j++ {
			if x := ws[j]; strings.HasSuffix(x, "ed") && len(x) > 4 || pastTense[x] {
				return true
			}
		}
	}
	return false
}

var pastTense = toSet(`did wrote made broke took put set ran got gave sent hit shut began drove`)

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// actsOnLiteral reports whether a verb of q acts on a literal: "clone
// https://…", "deploy ./dist". What it acts on is then the literal, which
// no tool names.
func actsOnLiteral(q string) bool {
	fs := strings.Fields(q)
	for i := 0; i+1 < len(fs); i++ {
		t, _ := wordTerm(strings.ToLower(strings.Trim(fs[i], ".,;:!?()'\"")))
		if verbs[t] && isLiteral(strings.TrimRight(fs[i+1], ".,;:!?)")) && literalKind(fs[i+1]) != "" {
			return true
		}
	}
	return false
}

// vagueObjects are nouns that say no kind of thing ("wipe the old
// numbers in B2:B50"): what a verb does to them is what it does to the
// place they are in.
var vagueObjects = toSet(strings.Join(Terms("number numbers stuff thing things everything anything something id ids identifier uuid"), " "))

// anchoredRE is an expression tried only on a text that has one of its
// anchors: most requests have none, and looking for one is cheaper.
type anchoredRE struct {
	anchors []string
	re      *regexp.Regexp
}

// anchored returns a constructor of an anchoredRE with anchors.
func anchored(anchors ...string) func(expr string) anchoredRE {
	return func(expr string) anchoredRE { return anchoredRE{anchors, regexp.MustCompile(expr)} }
}

// match reports whether s, lower-cased, matches.
func (a anchoredRE) match(s string) bool {
	return a.anchoredIn(s) && a.re.MatchString(s)
}

// anchoredIn reports whether s, lower-cased, has one of a's anchors.
func (a anchoredRE) anchoredIn(s string) bool {
	for _, x := range a.anchors {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
