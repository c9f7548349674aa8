package search

import (
	"regexp"
	"strings"
)

// stop are English words too common to tell tools apart.
var stop = toSet(`a an the of for to in on at by with from into onto about and or but not no nor
is are was were be been being am do does did has have had having will would shall should can could may might must
i me my mine we us our you your he him his she her it its they them their this that these those there here
what which who whom whose when where why how all any each every some such both either neither
as if then than so too very just also only own same other more most much many few
please want need like let sure one ones thing things take long help able currently quickly right now hey hi thanks
everything anything something nothing everyone anyone someone stuff give gave
ve re ll don doesn didn isn aren wasn weren won wouldn shouldn couldn haven hasn
just really still already yet since whether rather exactly actually maybe perhaps again even ever
quick kindly`)

// canon folds spellings and abbreviations of one word to one form. Keys
// and values are stemmed forms (stem runs first); it applies to queries
// and tools alike.
var canon = map[string]string{
	"repo": "repository", "kubernet": "k8s", "kube": "k8s", "dir": "directory",
	"img": "image", "msg": "messag", "db": "databas", "e-mail": "email",
	"info": "information", "indic": "index", "invitation": "invit", "config": "configuration", "env": "environment", "webpag": "pag",
}

// phrases are two-word verbs folded to one word, matched as whole words.
// Applied to tools and queries alike.
var phrases = map[[2]string]string{
	{"set", "up"}: "creat", {"sign", "up"}: "register", {"shut", "down"}: "stop", {"turn", "off"}: "stop",
	{"turn", "on"}: "start", {"look", "up"}: "search", {"log", "out"}: "signout", {"sign", "out"}: "signout",
	{"log", "in"}: "signin", {"sign", "in"}: "signin", {"logged", "in"}: "signin", {"e", "mail"}: "email", {"go", "to"}: "navigat",
	// Phrasal verbs of everyday requests.
	{"kick", "off"}: "start", {"spin", "up"}: "creat", {"tear", "down"}: "delet",
	{"look", "for"}: "search", {"look", "through"}: "search", {"dig", "through"}: "search", {"dig", "up"}: "search", {"pull", "up"}: "show", {"find", "out"}: "get",
	// "file a bug", "raise a ticket": create, not a file (and "open an
	// issue", see openable).
	{"file", "a"}: "creat", {"file", "an"}: "creat", {"raise", "a"}: "creat", {"raise", "an"}: "creat",
	{"get", "rid"}: "delet", {"write", "up"}: "creat", {"sign", "off"}: "approv",
}

// openable are what "open a …" creates (an issue, a pull request, a new
// tab) rather than opens to read (a file, a page).
var openable = toSet(`issue ticket bug pr mr pull merge incident case discussion thread request new`)

// creates maps a verb that, before "a"/"an" and one of its objects, means
// creating it: "open an issue", "log a bug" (not a log), "report a bug".
// Everyday idioms of software requests, matched as whole words.
var creates = map[string]map[string]bool{
	"open":   openable,
	"log":    toSet(`issue ticket bug incident case defect note notes call calls meeting meetings comment comments entry entries activity hours time visit expense`),
	"report": toSet(`issue ticket bug incident defect`),
	"submit": toSet(`issue ticket bug pr mr pull merge request`),
}

// leaves are verbs that, before "a"/"an" and something written, only
// mean writing it: "drop a comment" (not a deletion), "leave a note".
// The verb is dropped; the object says the action (a tool named
// add_comment, or just comment, both fit).
var leaves = toSet(`drop leave`)

var writable = toSet(`comment note line reply review message emoji reaction thumbs`)

// offVerbs, before "off" (or a pronoun and "off"), mark a task done:
// "tick it off my list", "cross off".
var offVerbs = toSet(`tick check cross mark`)

var pronouns = toSet(`it that this them these those`)

// expand replaces an abbreviation by its words.
var expand = map[string][]string{
	"pr":  {"pull", "request"},
	"prs": {"pull", "request"},
	"mr":  {"merge", "request"},
	"mrs": {"merge", "request"},
	// Shell commands, as a model may name the action.
	"mkdir": {"creat", "directory"}, "rmdir": {"delet", "directory"}, "ls": {"list", "directory"},
	"grep": {"search", "content"}, "rm": {"delet"}, "mv": {"mov"}, "cp": {"copy"},
	"lat": {"latitud"}, "lng": {"longitud"},
	"exec": {"execut"}, "cmd": {"command"}, "cmds": {"command"}, "dm": {"direct", "messag"}, "dms": {"direct", "messag"},
}

// synonymGroups are words of one meaning, in stemmed form. A query word
// is also searched as the others of its groups, at synonymWeight: general
// English, few, and never words that only sometimes mean the same (tell
// is not send). The first groups are verbs (see verbs).
var synonymGroups = [][]string{
	{"get", "fetch", "retriev", "read", "obtain", "view", "show", "display", "load", "see", "check", "inspect", "grab", "dump"},
	{"list", "enumerat", "show", "brows"},
	{"search", "find", "lookup", "query", "locat", "seek"},
	{"delet", "remov", "eras", "destroy", "purg", "drop", "trash", "wip", "wipe", "discard", "nuke", "scrap", "ditch"},
	{"creat", "add", "new", "mak", "insert", "generat", "jot", "make", "schedul"},
	{"updat", "modify", "edit", "chang", "patch", "alter", "adjust", "tweak"},
	{"writ", "sav", "save", "stor", "store", "overwrit"},
	{"send", "deliver", "dispatch", "post", "publish"},
	{"run", "execut", "invok", "launch", "trigger", "start"},
	{"start", "launch", "begin"},
	{"stop", "halt", "terminat", "kill", "cancel", "abort"},
	{"mov", "move", "renam", "relocat"},
	{"copy", "duplicat", "clon"},
	{"directory", "folder"},
	{"doc", "document", "documentation"},
	{"user", "person", "peopl", "member", "account", "collaborator", "teammat", "colleagu", "coworker"},
	{"issu", "ticket", "bug"},
	{"comment", "reply", "not"},
	{"link", "url"},
	{"pag", "websit", "sit"},
	{"web", "internet", "onlin"},
	{"navigat", "visit", "open"},
	{"click", "press", "tap"},
	{"typ", "type", "enter", "fill"},
	{"screenshot", "captur"},
	{"imag", "pictur", "photo"},
	{"error", "exception", "crash", "failur", "fail"},
	{"event", "meet", "appointment"},
	{"tag", "label"},
	{"relation", "relationship", "connection"},
	{"observation", "fact"},
	{"clos", "complet", "finish", "done", "resolv"},
	{"deploy", "deployment"},
	{"record", "row", "entry"},
	{"content", "text", "bodi"},
	{"information", "detail", "metadata"},
	{"status", "stat", "health"},
	{"summary", "summariz", "overview"},
	{"diff", "differenc", "different", "compar"},
	{"count", "number", "total"},
	{"process", "program"},
	{"shell", "terminal", "command"},
	{"disk", "storag", "spac"},
	{"task", "todo", "remind"},
	{"revert", "rollback", "undo"},
	{"invoic", "bill"},
	{"restart", "reboot"},
}

// synonyms maps a stemmed word to the others of its groups.
var synonyms = func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		for _, w := range g {
			for _, o := range g {
				if o != w && !contains(m[w], o) {
					m[w] = append(m[w], o)
				}
			}
		}
	}
	return m
}()

// changes are verbs that change a thing's state or one of its fields
// (close an issue, assign it, rename a tag, move it to a milestone): a
// catalog often does them with the thing's update tool, so each also
// means update, as a synonym.
var changes = toSet(`clos complet reopen set assign unassign mark renam mov move lock unlock pin unpin toggl enabl disabl bump reschedul prioritiz resolv`)

// oneWay are what a verb also means that its synonyms do not: posting a
// status or a comment creates it (but creating is no posting); cancelling
// an event or killing a module deletes it; stopping a session closes it;
// starting one creates it; putting a thing on a calendar adds it; pushing
// a date updates it; declaring an incident creates it.
var oneWay = map[string][]string{
	"post": {"creat"}, "cancel": {"delet"}, "kill": {"delet"}, "stop": {"clos", "disabl", "shutdown"}, "start": {"creat", "enabl"},
	"put": {"add"}, "push": {"updat"}, "declar": {"creat"}, "download": {"get"}, "writ": {"creat"}, "import": {"creat"}, "shopper": {"customer"}, "buyer": {"customer"},
	"ticket": {"story"}, "sell": {"sale"}, "junk": {"spam"}, "shift": {"move", "mov"},
	"sprint": {"iteration", "cycl"}, "silenc": {"mute", "snooz"}, "chargeback": {"disput"},
	"wip": {"clear"}, "wipe": {"clear"}, "tab": {"sheet"}, "articl": {"post"},
	"restor": {"untrash", "undelet", "recov", "unarchiv"}, "imag": {"media"},
}

// fields are what a thing carries that adding or removing changes ("add
// the label bug to issue 12" updates the issue).
var fields = toSet(`label tag assigne reviewer mileston priority due deadlin description titl status`)

// verbs are the stemmed verbs of the synonym table: a name starting with
// one has no family prefix.
var verbs = func() map[string]bool {
	m := map[string]bool{}
	for _, g := range synonymGroups[:13] { // the verb groups
		for _, w := range g {
			m[w] = true
		}
	}
	for _, w := range strings.Fields(`is has check set clos complet approv merg upload download fork sync export import translat reset push mark enabl disabl shutdown`) {
		m[w] = true
	}
	for w := range specificVerbs {
		m[w] = true
	}
	return m
}()

// specificVerbs are verbs of one precise action: unlike get, create or
// run, one of them alone is a query specific enough to answer ("refund").
var specificVerbs = toSet(`shar invit archiv enroll dismiss restor refund subscrib unsubscrib pin star mute snooz transfer schedul assign reopen fork`)

// readVerbs are what a question without a verb asks a tool to do.
var readVerbs = []string{"get", "list", "search", "find", "read", "show", "query"}

var readGroup = func() map[string]bool {
	m := map[string]bool{}
	for _, g := range synonymGroups[:3] {
		for _, w := range g {
			m[w] = true
		}
	}
	return m
}()

// records are nouns that a verb before them modifies ("change history").
var records = toSet(`history histories log logs feed`)

// negations say that what follows is not to be done.
var negations = toSet(`don't dont never without not`)

// npOpeners open a noun phrase (not "that", which also opens a clause).
var npOpeners = toSet(`the a an my our your his her its their each every any some no another`)

// howHints are what a "how …" question asks for, as a term.
var howHints = []struct{ phrase, term string }{{"how many", "count"}, {"how far", "distanc"}, {"how long", "time"}}

// indirectQuestions say a request asks something ("I need to know how
// many…", "tell me whether…").
var indirectQuestions = []string{" how many ", " how much ", " whether ", " know if ", " know which ", " know what ", " know who ", " know when ", " know where ", " tell me if ", " tell me which ", " tell me what ", " tell me who ", " tell me when ", " tell me where ", " wondering "}

// determiners come before the thing a request names ("a Jira ticket").
var determiners = toSet(`a an the my our your their his her its this that these those some`)

// containers are things whose instances have names: "my Downloads
// folder" names a folder, not a service.
var containers = toSet(`folder folders directory directories dir file files button buttons page pages tab tabs link
field fields channel channels table tables column columns project projects repo repository branch board list
menu window dialog section label tag namespace cluster database collection bucket document sheet`)

// namePrepositions end what a tool's name acts on.
var namePrepositions = toSet(`to from by in into on for of with`)

var prepositions = toSet(`from in into within on onto for to with by at under inside across between among via through over`)

// clauseWords begin a clause or a phrase that is not the object of the
// verb before them.
var clauseWords = toSet(`that which who whose whom when where while if then as than so because unless until`)

// weekday is a day of the week said as a date, capitalized ("on Monday",
// "until Friday", "next Tuesday"; "on monday" is the monday.com server a
// model types in lower case).
var weekday = regexp.MustCompile(`\b((?i:on|until|till|by|next|this|last|since|before|after|every|from|through|to|for))\s+(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?\b`)

// weekdays are the days of the week, lower-cased.
var weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// googleTerm is "google" as the index has it.
var googleTerm = Terms("google")[0]
