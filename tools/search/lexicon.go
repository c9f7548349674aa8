package search

import (
	"embed"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The ranking's word knowledge is data: the embedded files of words/ (see
// docs/search.md for their format), and an operator's word files added to
// them (LoadLexicon). No code path names a word, a service or a brand.

//go:embed words/*.txt
var builtinFiles embed.FS

// Lexicon is the word knowledge of a search: word sets, synonyms,
// canonical forms and abbreviations, phrasal verbs and idioms, hints,
// services, concepts and rephrasings. It is immutable once loaded and safe
// for concurrent use.
type Lexicon struct {
	// Word sets, by role (see words/sets.txt and setNames). Those marked
	// terms hold index terms; the others words as written.
	stop, determiners, containers, namePrepositions, prepositions, clauseWords map[string]bool
	records, negations, npOpeners, pronouns, offVerbs, writable                map[string]bool
	asking, subjects, argClause, softReasons, saidThings, saidOpeners, speaker map[string]bool
	questionOpeners, whoDid, pastTense, languages, intoWords, dates            map[string]bool
	dateOpeners, tlds, slashPairs, repoPreps, serviceOpeners, serviceParts     map[string]bool
	familyWords                                                                map[string]bool
	// terms
	extraVerbs, changes, fields, fieldVerbs, specificVerbs, partVerbs    map[string]bool
	loneVerbs, vagueObjects, genericNameVerbs, markingVerbs, browseVerbs map[string]bool
	readVerbs, derivations                                               []string
	updateVerb, createVerb, listVerb, getVerb                            string
	sets                                                                 map[string]*wordSet
	indirectQuestions                                                    []string // padded with spaces

	// Synonyms and the verbs (words/synonyms.txt).
	synonymGroups    []synonymGroup
	synonyms         map[string][]string // a term → the others of its groups
	verbs, readGroup map[string]bool
	oneWay           map[string][]string // [means]
	canon            map[string]string
	expand           map[string][]string // [abbreviations]

	// Phrasal verbs and idioms, and hints (words/phrasal.txt).
	ruleList      []*phrasal
	rules         map[string][]*phrasal // by the words that begin them
	idiomWords    map[string]bool
	pairs         map[[2]string]string // two-word verbs: a phrasal of two plain words and one term
	containsHints []phraseHint
	wordHints     []wordHint
	kindHints     map[string]string

	// Services (words/services.txt).
	services, commonServices map[string]bool
	suites                   map[string]map[string]bool // a suite's word → its products
	suiteWords               []string

	concepts    []concept    // words/concepts.txt
	rephrasings []rephrasing // words/rephrasings.txt

	date      *regexp.Regexp // a date said after a word of date-openers
	dateTerms []string

	open bool // while loading: a record (a concept, a rephrasing) is open in its section
}

// wordSet is a named set of words, in the order the files give them.
type wordSet struct {
	terms bool // its words are index terms (stemmed when read)
	words []string
	has   map[string]bool
}

// synonymGroup is a line of [synonyms]: words of one meaning.
type synonymGroup struct {
	kind  string // read, verb or word
	terms []string
}

// phraseHint: a request whose text contains phrase implies term.
type phraseHint struct{ phrase, term string }

// wordHint: a request that says one of words implies term.
type wordHint struct {
	words map[string]bool
	term  string
}

// setNames are the word sets the code reads, each with whether it holds
// terms and where the Lexicon keeps it.
var setNames = []struct {
	name  string
	terms bool
	field func(lx *Lexicon) *map[string]bool
}{
	{"stop", false, func(lx *Lexicon) *map[string]bool { return &lx.stop }},
	{"verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.extraVerbs }},
	{"specific-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.specificVerbs }},
	{"state-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.changes }},
	{"fields", true, func(lx *Lexicon) *map[string]bool { return &lx.fields }},
	{"field-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.fieldVerbs }},
	{"read-verbs", true, nil},
	{"update-verb", true, nil},
	{"create-verb", true, nil},
	{"list-verb", true, nil},
	{"get-verb", true, nil},
	{"part-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.partVerbs }},
	{"lone-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.loneVerbs }},
	{"generic-name-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.genericNameVerbs }},
	{"marking-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.markingVerbs }},
	{"browse-verbs", true, func(lx *Lexicon) *map[string]bool { return &lx.browseVerbs }},
	{"vague-objects", true, func(lx *Lexicon) *map[string]bool { return &lx.vagueObjects }},
	{"derivations", false, nil},
	{"records", false, func(lx *Lexicon) *map[string]bool { return &lx.records }},
	{"negations", false, func(lx *Lexicon) *map[string]bool { return &lx.negations }},
	{"np-openers", false, func(lx *Lexicon) *map[string]bool { return &lx.npOpeners }},
	{"determiners", false, func(lx *Lexicon) *map[string]bool { return &lx.determiners }},
	{"containers", false, func(lx *Lexicon) *map[string]bool { return &lx.containers }},
	{"name-prepositions", false, func(lx *Lexicon) *map[string]bool { return &lx.namePrepositions }},
	{"prepositions", false, func(lx *Lexicon) *map[string]bool { return &lx.prepositions }},
	{"clause-words", false, func(lx *Lexicon) *map[string]bool { return &lx.clauseWords }},
	{"pronouns", false, func(lx *Lexicon) *map[string]bool { return &lx.pronouns }},
	{"asking", false, func(lx *Lexicon) *map[string]bool { return &lx.asking }},
	{"subjects", false, func(lx *Lexicon) *map[string]bool { return &lx.subjects }},
	{"arg-clause", false, func(lx *Lexicon) *map[string]bool { return &lx.argClause }},
	{"soft-reasons", false, func(lx *Lexicon) *map[string]bool { return &lx.softReasons }},
	{"said-things", false, func(lx *Lexicon) *map[string]bool { return &lx.saidThings }},
	{"said-openers", false, func(lx *Lexicon) *map[string]bool { return &lx.saidOpeners }},
	{"speaker", false, func(lx *Lexicon) *map[string]bool { return &lx.speaker }},
	{"question-openers", false, func(lx *Lexicon) *map[string]bool { return &lx.questionOpeners }},
	{"who-did", false, func(lx *Lexicon) *map[string]bool { return &lx.whoDid }},
	{"past-tense", false, func(lx *Lexicon) *map[string]bool { return &lx.pastTense }},
	{"languages", false, func(lx *Lexicon) *map[string]bool { return &lx.languages }},
	{"into-words", false, func(lx *Lexicon) *map[string]bool { return &lx.intoWords }},
	{"dates", false, func(lx *Lexicon) *map[string]bool { return &lx.dates }},
	{"date-openers", false, func(lx *Lexicon) *map[string]bool { return &lx.dateOpeners }},
	{"tlds", false, func(lx *Lexicon) *map[string]bool { return &lx.tlds }},
	{"slash-pairs", false, func(lx *Lexicon) *map[string]bool { return &lx.slashPairs }},
	{"repo-prepositions", false, func(lx *Lexicon) *map[string]bool { return &lx.repoPreps }},
	{"service-openers", false, func(lx *Lexicon) *map[string]bool { return &lx.serviceOpeners }},
	{"service-parts", false, func(lx *Lexicon) *map[string]bool { return &lx.serviceParts }},
	{"openable", false, nil},
	{"loggable", false, nil},
	{"reportable", false, nil},
	{"submittable", false, nil},
	{"leave-verbs", false, nil},
	{"written-things", false, func(lx *Lexicon) *map[string]bool { return &lx.writable }},
	{"off-verbs", false, func(lx *Lexicon) *map[string]bool { return &lx.offVerbs }},
	{"family-words", false, func(lx *Lexicon) *map[string]bool { return &lx.familyWords }},
}

var (
	builtinOnce sync.Once
	builtinLex  *Lexicon
)

// builtin is the Lexicon of the embedded word files.
func builtin() *Lexicon {
	builtinOnce.Do(func() {
		lx, err := loadLexicon(nil)
		if err != nil {
			panic("search: the embedded word files: " + err.Error())
		}
		builtinLex = lx
	})
	return builtinLex
}

// LoadLexicon returns the built-in word knowledge with the word files at
// paths added, in order (see docs/search.md for their format). An error
// names the file and line it is about.
func LoadLexicon(paths ...string) (*Lexicon, error) {
	var extra []wordFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("search: word file: %w", err)
		}
		f, err := parseWordFile(path.Base(p), string(data))
		if err != nil {
			return nil, err
		}
		extra = append(extra, f)
	}
	return loadLexicon(extra)
}

// ParseLexicon returns the built-in word knowledge with one word file
// added, given as its name (for errors) and text.
func ParseLexicon(name, text string) (*Lexicon, error) {
	f, err := parseWordFile(name, text)
	if err != nil {
		return nil, err
	}
	return loadLexicon([]wordFile{f})
}

// wordFile is a parsed word file: its sections' logical lines.
type wordFile struct {
	name     string
	sections []wordSection
}

type wordSection struct {
	name  string
	lines []wordLine
}

// wordLine is a logical line: a line that does not start with a space,
// and the lines after it that do, joined by a space.
type wordLine struct {
	text string
	line int
}

// sectionOrder is the order sections are read in, whatever the files'
// order: each may use what the ones before it made (a set named in a
// phrasal pattern, the stop words of a concept's words).
var sectionOrder = []string{"canonical", "sets", "phrases", "synonyms", "means", "abbreviations", "phrasal", "hints", "services", "concepts", "rephrasings"}

func parseWordFile(name, text string) (wordFile, error) {
	f := wordFile{name: name}
	var sec *wordSection
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if line[0] == '[' && strings.HasSuffix(line, "]") && !strings.ContainsAny(line, " \t") {
			s := line[1 : len(line)-1]
			if !slices.Contains(sectionOrder, s) {
				return f, fmt.Errorf("search: %s:%d: unknown section %s (the sections: %s)", name, n, trimmed, strings.Join(sectionOrder, ", "))
			}
			f.sections = append(f.sections, wordSection{name: s})
			sec = &f.sections[len(f.sections)-1]
			continue
		}
		if sec == nil {
			return f, fmt.Errorf("search: %s:%d: a line before any [section]", name, n)
		}
		if line[0] == ' ' || line[0] == '\t' {
			if len(sec.lines) == 0 {
				return f, fmt.Errorf("search: %s:%d: a continued line (it starts with a space) with no line before it", name, n)
			}
			sec.lines[len(sec.lines)-1].text += " " + trimmed
			continue
		}
		sec.lines = append(sec.lines, wordLine{text: trimmed, line: n})
	}
	return f, nil
}

// loadLexicon reads the embedded word files, then extra.
func loadLexicon(extra []wordFile) (*Lexicon, error) {
	entries, err := builtinFiles.ReadDir("words")
	if err != nil {
		return nil, err
	}
	var files []wordFile
	for _, e := range entries {
		data, err := builtinFiles.ReadFile("words/" + e.Name())
		if err != nil {
			return nil, err
		}
		f, err := parseWordFile(e.Name(), string(data))
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	files = append(files, extra...)
	lx := &Lexicon{sets: map[string]*wordSet{}, canon: map[string]string{}, oneWay: map[string][]string{}, expand: map[string][]string{},
		rules: map[string][]*phrasal{}, kindHints: map[string]string{}, services: map[string]bool{}, commonServices: map[string]bool{},
		suites: map[string]map[string]bool{}}
	for _, s := range setNames {
		lx.sets[s.name] = &wordSet{terms: s.terms, has: map[string]bool{}}
	}
	for _, sec := range sectionOrder {
		order := files
		if sec == "phrasal" {
			// An operator's patterns are tried before the built-in ones.
			order = append(slices.Clone(extra), files[:len(files)-len(extra)]...)
		}
		for _, f := range order {
			for _, s := range f.sections {
				if s.name != sec {
					continue
				}
				lx.open = false // a record (a concept, a rephrasing) begins in its section
				for _, l := range s.lines {
					if err := lx.read(sec, l.text); err != nil {
						return nil, fmt.Errorf("search: %s:%d: %v", f.name, l.line, err)
					}
				}
			}
		}
		switch sec {
		case "sets":
			lx.bindSets()
		case "synonyms":
			lx.bindSynonyms()
		case "phrasal":
			lx.bindRules()
		}
	}
	lx.bindDates()
	return lx, lx.check()
}

// read reads one logical line of section sec.
func (lx *Lexicon) read(sec, text string) error {
	switch sec {
	case "sets":
		name, words, ok := strings.Cut(text, ":")
		set := lx.sets[strings.TrimSpace(name)]
		if !ok || set == nil {
			return fmt.Errorf("want name: words, with a set's name (%s)", setNameList())
		}
		for _, w := range strings.Fields(words) {
			if set.terms {
				w = lx.norm(w)
			}
			if !set.has[w] {
				set.has[w] = true
				set.words = append(set.words, w)
			}
		}
	case "phrases":
		name, list, ok := strings.Cut(text, ":")
		if !ok || strings.TrimSpace(name) != "indirect-questions" {
			return fmt.Errorf("want indirect-questions: phrase | phrase")
		}
		ps, err := phraseList(list)
		if err != nil {
			return err
		}
		for _, p := range ps {
			lx.indirectQuestions = append(lx.indirectQuestions, " "+p+" ")
		}
	case "synonyms":
		kind, words, ok := strings.Cut(text, ":")
		kind = strings.TrimSpace(kind)
		if !ok || kind != "read" && kind != "verb" && kind != "word" {
			return fmt.Errorf("want read:, verb: or word: and the words of a group")
		}
		g := synonymGroup{kind: kind}
		for _, w := range strings.Fields(words) {
			if t := lx.norm(w); !slices.Contains(g.terms, t) {
				g.terms = append(g.terms, t)
			}
		}
		if len(g.terms) < 2 {
			return fmt.Errorf("a group of synonyms needs two words or more")
		}
		lx.synonymGroups = append(lx.synonymGroups, g)
	case "means":
		w, means, ok := strings.Cut(text, ":")
		if !ok || len(strings.Fields(w)) != 1 || len(strings.Fields(means)) == 0 {
			return fmt.Errorf("want word: what it also means")
		}
		k := lx.norm(strings.TrimSpace(w))
		for _, m := range strings.Fields(means) {
			lx.oneWay[k] = append(lx.oneWay[k], lx.norm(m))
		}
	case "canonical":
		w, c, ok := strings.Cut(text, ":")
		if !ok || len(strings.Fields(w)) != 1 || len(strings.Fields(c)) != 1 {
			return fmt.Errorf("want word: its canonical form")
		}
		lx.canon[stemmed(strings.TrimSpace(w))] = stemmed(strings.TrimSpace(c))
	case "abbreviations":
		w, exp, ok := strings.Cut(text, ":")
		if !ok || len(strings.Fields(w)) != 1 || len(strings.Fields(exp)) == 0 {
			return fmt.Errorf("want abbreviation: its words")
		}
		var ts []string
		for _, e := range strings.Fields(exp) {
			ts = append(ts, lx.norm(e))
		}
		lx.expand[strings.ToLower(strings.TrimSpace(w))] = ts
	case "phrasal":
		return lx.readPhrasal(text)
	case "hints":
		return lx.readHint(text)
	case "services":
		return lx.readServices(text)
	case "concepts":
		return lx.readConcept(text)
	case "rephrasings":
		return lx.readRephrasing(text)
	}
	return nil
}

func setNameList() string {
	var out []string
	for _, s := range setNames {
		out = append(out, s.name)
	}
	return strings.Join(out, ", ")
}

// stemmed is the index form of w without the canonical forms: a word
// written =w is w as it is.
func stemmed(w string) string {
	if t, ok := strings.CutPrefix(w, "="); ok {
		return t
	}
	w = strings.ToLower(w)
	if v, ok := irregular[w]; ok {
		return v
	}
	return stem(w)
}

// norm is the index form of a word of a word file, as text's words get
// it (stemmed, a canonical form folded), stop words and abbreviations
// aside: a word written =w is w as it is.
func (lx *Lexicon) norm(w string) string {
	if strings.HasPrefix(w, "=") {
		return w[1:]
	}
	t := stemmed(w)
	if c, ok := lx.canon[t]; ok {
		t = c
	}
	return t
}

// phraseList splits a | b | c, each phrase trimmed unless quoted.
func phraseList(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, "|") {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, `"`) {
			u, err := strconv.Unquote(p)
			if err != nil {
				return nil, fmt.Errorf("bad quoted phrase %s", p)
			}
			p = u
		}
		if p == "" {
			return nil, fmt.Errorf("an empty phrase in %q", s)
		}
		out = append(out, p)
	}
	return out, nil
}

// bindSets sets the Lexicon's fields from its word sets.
func (lx *Lexicon) bindSets() {
	for _, s := range setNames {
		if s.field != nil {
			*s.field(lx) = lx.sets[s.name].has
		}
	}
	lx.readVerbs = lx.sets["read-verbs"].words
	lx.derivations = lx.sets["derivations"].words
	one := func(name string) string {
		if ws := lx.sets[name].words; len(ws) > 0 {
			return ws[0]
		}
		return ""
	}
	lx.updateVerb, lx.createVerb, lx.listVerb, lx.getVerb = one("update-verb"), one("create-verb"), one("list-verb"), one("get-verb")
}

// bindSynonyms derives the synonyms of each word and the verbs.
func (lx *Lexicon) bindSynonyms() {
	lx.synonyms = map[string][]string{}
	lx.verbs = map[string]bool{}
	lx.readGroup = map[string]bool{}
	for _, g := range lx.synonymGroups {
		for _, w := range g.terms {
			for _, o := range g.terms {
				if o != w && !slices.Contains(lx.synonyms[w], o) {
					lx.synonyms[w] = append(lx.synonyms[w], o)
				}
			}
			if g.kind != "word" {
				lx.verbs[w] = true
			}
			if g.kind == "read" {
				lx.readGroup[w] = true
			}
		}
	}
	for w := range lx.extraVerbs {
		lx.verbs[w] = true
	}
	for w := range lx.specificVerbs {
		lx.verbs[w] = true
	}
}

// bindRules derives from the phrasal rules the words that may begin one
// and the two-word verbs.
func (lx *Lexicon) bindRules() {
	lx.idiomWords = map[string]bool{}
	lx.pairs = map[[2]string]string{}
	for _, r := range lx.ruleList {
		for _, w := range r.first(lx) {
			lx.idiomWords[w] = true
		}
		if a, b, ok := r.pair(); ok {
			if _, dup := lx.pairs[[2]string{a, b}]; !dup {
				lx.pairs[[2]string{a, b}] = r.out[0]
			}
		}
	}
}

// bindDates makes the expression of a date said after a word of
// date-openers: "on Monday", "until Friday", "next Tuesday" (capitalized:
// a model that types a family's name types it in lower case).
func (lx *Lexicon) bindDates() {
	dates, openers := lx.sets["dates"].words, lx.sets["date-openers"].words
	if len(dates) == 0 || len(openers) == 0 {
		return
	}
	q := func(ws []string) string {
		out := make([]string, len(ws))
		for i, w := range ws {
			out[i] = regexp.QuoteMeta(w)
		}
		return strings.Join(out, "|")
	}
	lx.date = regexp.MustCompile(`\b((?i:` + q(openers) + `))\s+(` + q(dates) + `)s?\b`)
	for _, d := range dates {
		lx.dateTerms = append(lx.dateTerms, stem(strings.ToLower(d)))
	}
}

// readHint reads a line of [hints]: contains PHRASE: word, word WORDS:
// word or kind KIND: word.
func (lx *Lexicon) readHint(text string) error {
	i := strings.LastIndexByte(text, ':')
	if i < 0 || len(strings.Fields(text[i+1:])) != 1 {
		return fmt.Errorf("want contains PHRASE: word, word WORDS: word or kind KIND: word")
	}
	head, term := strings.TrimSpace(text[:i]), lx.norm(strings.TrimSpace(text[i+1:]))
	kind, arg, _ := strings.Cut(head, " ")
	arg = strings.TrimSpace(arg)
	switch {
	case kind == "contains" && arg != "":
		lx.containsHints = append(lx.containsHints, phraseHint{strings.ToLower(arg), term})
	case kind == "word" && arg != "":
		h := wordHint{words: map[string]bool{}, term: term}
		for _, w := range strings.Fields(arg) {
			h.words[strings.ToLower(w)] = true
		}
		lx.wordHints = append(lx.wordHints, h)
	case kind == "kind" && literalKinds[arg]:
		lx.kindHints[arg] = term
	default:
		return fmt.Errorf("want contains PHRASE: word, word WORDS: word or kind KIND: word (a kind: url, file, phone, reference)")
	}
	return nil
}

// check reports what the files left incomplete: a concept or a
// rephrasing without its way to be said.
func (lx *Lexicon) check() error {
	for _, c := range lx.concepts {
		if len(c.when) == 0 {
			return fmt.Errorf("search: the concept %q has no when: line", strings.Join(c.terms, " "))
		}
	}
	for _, r := range lx.rephrasings {
		if r.re == nil {
			return fmt.Errorf("search: the rephrasing %q has no match: line", r.repl)
		}
	}
	return nil
}
