package search

// The tuned numbers of the ranking and the confidence decision, in one
// place. Each was chosen on the seen query sets (docs/measurements/search.md
// says how and what it gained); change one only with the held-out sets'
// figures before and after (TestHeldOutSets -v), and refit the gate
// (TestGateWeights -update) when the ranking's features move.

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
// (see docs/measurements/search.md).
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

// A request of at most brandMaxGroups words that names something the
// catalog does not know (see namesUnknown) keeps brandConf of each hit's
// confidence.
const (
	brandMaxGroups = 8
	brandConf      = 0.5
)

const (
	commonNameCover = 0.75
	famNameCover    = 0.6
)

// The weights of a request's words by the part of the request they are in
// (see queryTerms).
const (
	// contextWeight is the weight of a sentence that only tells the
	// situation ("My laptop fan is going crazy.") in a request that also
	// asks something.
	contextWeight = 0.5
	// argWeight is the weight of a clause that says what to write or why
	// ("… saying the fix is deployed", "… so I can experiment").
	argWeight = 0.4
)

// relatedWeight is what a related word (WordNet) of a query word the
// catalog does not use counts, relative to the word itself: less than a
// synonym of the hand-made table, which was chosen for tools' vocabulary.
// (Expanding every query word, not only the unknown ones, lost queries on
// all three sets; see docs/measurements/search.md.)
const relatedWeight = 0.4

// argCover scales the weight in a query's coverage of a word the catalog
// does not use whose most frequent sense names a person, place, time,
// quantity, food, … (WordNet's class; "dentist", "Friday", "kilometre"):
// an argument of the request, not what it asks a tool to do.
const argCover = 0.5

// gateThreshold is the least probability of the model at which an
// answer is confident. Fitted on four catalogs' seen sets and tried on the
// fifth, in turn, a higher threshold answers more no-match requests not
// confident and fewer answerable ones confident, and costs whole requests
// little of their top five (their first three are answered either way):
// 0.4 → 76.5% of no-match requests not confident, 88.9% of requests with a
// right tool in the first five, 95.5% of answerable queries confident;
// 0.8 → 91.1%, 88.2%, 83.0%; 0.83 → 92.1%, 88.2%, 80.5%; 0.85 → 93.0%,
// 88.1%, 78.9%. 0.83 was chosen there, for 90% of no-match requests with a
// margin.
const gateThreshold = 0.83

// gateMinTools is the smallest catalog the model weighs: the catalogs it
// was fitted to have 213 to 363 tools. In a much smaller one what a
// query's best tools look like is not what the model learnt (one tool of
// ten meets much of any query), and the checks decide alone.
const gateMinTools = 100

// A query all of whose words are said by at least familyWide of a
// family's tools, and by at most familyElsewhere of the others', asks
// about the family as a whole (see askedFamily).
// (Words one or two of a family's tools say, or one word alone, found a
// family where the request asked one of its tools: "airtable list
// bases", "every URL on docs.example.com".)
const (
	familyWide      = 0.6
	familyElsewhere = 0.2
	minWideWords    = 2
	minWideFamily   = 3
)
