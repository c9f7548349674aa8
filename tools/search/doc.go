// Package search ranks a catalog's tools for a query in words, so a model
// facing hundreds of tools can find the few it needs without reading every
// schema: the search_tools tool and tools.$search in programs
// (bindings/discovery.go). It is lexical — a model of meaning may rerank
// its best tools, off by default — and runs in a fraction of a
// millisecond on 500 tools. It says when it is unsure rather than answer
// with nothing.
//
// # The pipeline
//
// New indexes a set of tools once (index.go): each tool is a document of
// five fields — the action words of its name (its family prefix removed),
// its family (the upstream server, or a first name word several tools
// share), its summary (title and first sentence), the rest of its
// description, and its parameters. Index.Search then runs one query
// through named stages, each in its own file:
//
//   - analyze (analyze.go, text.go, literals.go, clauses.go): the
//     request's literal values (quoted strings, numbers, paths, URLs) are
//     stripped, keeping their kind; everyday phrasings are rephrased
//     (concepts.go); the text is cut into words, stop words dropped,
//     phrasal verbs folded and words stemmed; each word is weighed by the
//     part of the request it is in (a sentence that only tells the
//     situation, a clause that carries the text to write weigh less) and
//     grouped with its synonyms, typos, derived and related words; what the
//     request implies (a concept) and asks (its verbs, a question) is read.
//     The result is a query.
//   - match (bm25f.go): BM25F over the five fields, each group scored by
//     its best term; with each tool's coverage of the query.
//   - rerank (rerank.go): a Reranker scores the matched tools. The
//     ranking's own, Lexical, scales the BM25F score by coverage, by how
//     much of the tool's name the query says, by its server's fit to the
//     whole request (serverScores) and by whether its name's verb is the
//     one asked for, and gives each tool its confidence in [0, 1]. A
//     second, optional one (Options.Reranker) reorders the best 20:
//     Embeddings (embeddings.go) asks any OpenAI-compatible /v1/embeddings
//     server, caches the tools' vectors, and fails open to the lexical
//     order on any error or timeout. Off by default (Config).
//   - scope (families.go): a query about a family as a whole — its name
//     ("memory", "what can the memory server do") or words every one of
//     its tools says ("knowledge graph") — is answered with the family's
//     tools, confidently; a request that names a family for sure is
//     answered from that family's tools.
//   - confidence (checks.go, confidence.go): five checks — a verb the
//     catalog never says, a service it lacks, an action that meets no
//     tool's object, a floor none of the best tools reaches, a query many
//     tools fit alike — and a logistic model over them and the ranking's
//     features (gate.txt, fitted by TestGateWeights) decide whether the
//     hits answer the query: in a catalog of 100 tools or more the model
//     alone, in a smaller one the checks with a model fitted to small
//     catalogs agreeing. A search never answers with nothing for want of
//     confidence: Result.Confident says whether the hits answer it, and
//     when they do not they are the closest five, with the catalog's
//     families (Result.Families) to look further in.
//
// search.go drives the stages. Every tuned number is data: tuning.txt
// (chosen by hand, each row saying what it does) and gate.txt (the
// fitted models), embedded and read by tuning.go; TestTuningRows checks
// that each row still moves an answer.
//
// # Word knowledge
//
// What the ranking knows of English and of services is data, not code:
// the embedded files of words/ — word sets by role (sets.txt), synonyms,
// one-way meanings, canonical forms and abbreviations (synonyms.txt),
// phrasal verbs, idioms and hints (phrasal.txt), the concepts a request
// implies (concepts.txt), rephrasings (rephrasings.txt) and well-known
// services (services.txt) — read into a Lexicon (lexicon.go, phrasal.go,
// concepts.go, services.go). No code path names a word, a server or a
// brand. WordNet's related words and irregular verbs are embedded text
// too (related.txt and irregular.txt, made by internal/genrelated). An
// operator adds a domain's words in a file of the same format
// (LoadLexicon, Options.Lexicon); docs/search.md describes it. Every row
// of the built-in files is a generated test case (words_test.go).
//
// # Changing it safely
//
// Every change to the ranking is measured on the labelled query sets of
// five catalogs of real MCP servers (testdata/realcatalog*: 1,557 tools,
// each set written blind by someone who had not seen the code), on small
// catalogs (testdata/small: a few real servers, and the demo tools; and
// the real catalogs cut into catalogs of 20 to 60 tools,
// subsets_test.go) and on the older fixture (testdata/catalog.txt). Some
// sets are held out: no change is tuned on them (gateHeldOut in
// gate_test.go, smallHeldOut in small_test.go). The discipline:
//
//  1. A refactor must leave every ranking unchanged: dump them before and
//     after (go test -run TestDumpRankings -args -dump=FILE) and compare
//     the files.
//  2. A change of behavior is measured on the seen sets while it is
//     tuned (go test -run 'TestSeenSets|TestSmallCatalogs|TestSmallSubsets'
//     -v), then once on the held-out ones (TestHeldOutSets -v,
//     TestSmallSubsets -v -args -heldout; neither prints a held-out
//     query), with the figures before and after in the commit message.
//     New word rows are data: add a row, and its generated test, to
//     words/; a tuned number is a row of tuning.txt.
//  3. When the ranking's features move, refit the gate's models (go test
//     -run TestGateWeights -args -update) and check them left out
//     (TestGateLeftOut).
//  4. The per-set floors of the real-catalog tests guard against
//     regressions; move one only with its new figure and the reason.
//  5. Speed is measured, not asserted: BenchmarkSearchReal500 (a search
//     on 500 real tools, about 0.12–0.2 ms; cpu-ns/op is the CPU time,
//     the figure to compare on a loaded machine) and
//     BenchmarkBuildReal500, before and after, interleaved. Answer size
//     is measured in bindings (TestSearchAnswerSize).
//
// docs/measurements/search.md keeps the tuning history: what each round
// tried, kept and dropped, with its figures.
//
// # Live indexes
//
// An Index is immutable and safe for concurrent use. Live keeps one in
// step with a tools.Catalog: rebuilt in the background after a burst of
// catalog changes, so a search rarely pays for a build.
package search
