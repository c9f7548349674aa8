// Command genrelated derives tools/search/related.txt, the table of
// related words that search uses as a soft query expansion (see its
// package doc), from WordNet 3.0 (https://wordnet.princeton.edu; its
// license is tools/search/wordnet-license.txt). In tools/search:
//
//	go generate    # go run ./internal/genrelated [-wordnet DIR] [-o related.txt]
//
// DIR is WordNet's dict directory: /usr/share/wordnet by default, where the
// Debian package wordnet-base installs it (`apt-get install wordnet-base`).
//
// For each common noun, verb and adjective (one word, used at least
// minCount times in WordNet's sense-tagged corpora, cntlist.rev) the table
// lists, for its most frequent senses (at most maxSenses, and only the
// senses that were tagged): the other common words of the sense's synset
// (synonyms), its derivationally related forms (remind → reminder, modify
// → modification, complete → completion), and the attribute an adjective
// names (big → size, long → length). Words are in search's index form
// (search.Terms: lower-cased, stemmed, one term each); a line is the word
// then its related words, most frequent sense first, lines sorted. The
// table is symmetric only as far as WordNet is.
package main

import (
	"bufio"
	"flag"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sandcall/sandcall/tools/search"
)

const (
	// minCount is the least number of tagged uses of a word (all senses)
	// for it to be a key or a related word: common words only.
	minCount = 5
	// maxSenses is how many of a word's most frequent senses count.
	maxSenses = 2
	// maxRelated caps a word's related words.
	maxRelated = 8
)

type synset struct {
	words []string // lemmas, lower-case, _ for spaces
	ptrs  []pointer
}

type pointer struct {
	sym      string
	offset   string
	pos      byte
	src, dst int // word numbers, 1-based; 0: the whole synset
}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict directory")
	out := flag.String("o", "related.txt", "output file")
	irregular := flag.String("irregular", "irregular.txt", "output file of irregular verb forms")
	hyper := flag.String("hyper", "", "parts of speech (n, v) whose first sense's hypernyms are related words")
	flag.Parse()

	count, class := readCounts(filepath.Join(*dir, "cntlist.rev"))
	data := map[byte]map[string]*synset{}
	for _, p := range []struct {
		pos  byte
		file string
	}{{'n', "noun"}, {'v', "verb"}, {'a', "adj"}} {
		data[p.pos] = readData(filepath.Join(*dir, "data."+p.file))
	}
	common := func(w string) bool { return count[w] >= minCount && !strings.ContainsAny(w, "_-.'0123456789") }
	term := func(w string) string {
		t := search.Terms(w)
		if len(t) != 1 {
			return ""
		}
		return t[0]
	}

	rel := map[string][]string{}
	add := func(k, r string) {
		if k == "" || r == "" || k == r {
			return
		}
		for _, x := range rel[k] {
			if x == r {
				return
			}
		}
		rel[k] = append(rel[k], r)
	}
	for _, p := range []struct {
		pos  byte
		file string
	}{{'v', "verb"}, {'n', "noun"}, {'a', "adj"}} {
		f, err := os.Open(filepath.Join(*dir, "index."+p.file))
		if err != nil {
			log.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, " ") {
				continue // the license header
			}
			fs := strings.Fields(line)
			lemma := fs[0]
			if !common(lemma) {
				continue
			}
			k := term(lemma)
			if k == "" {
				continue
			}
			nptr, _ := strconv.Atoi(fs[3])
			tagged, _ := strconv.Atoi(fs[5+nptr])
			offsets := fs[6+nptr:]
			for i, off := range offsets {
				if i >= maxSenses || i >= tagged {
					break
				}
				ss := data[p.pos][off]
				if ss == nil {
					continue
				}
				me := 0
				for j, w := range ss.words {
					if w == lemma {
						me = j + 1
					}
				}
				for _, w := range ss.words {
					if w != lemma && common(w) {
						add(k, term(w))
					}
				}
				for _, ptr := range ss.ptrs {
					switch {
					case ptr.sym == "+" && ptr.src == me: // derivationally related form
					case ptr.sym == "=" && p.pos == 'a': // the attribute an adjective names
					case ptr.sym == "@" && i == 0 && strings.Contains(*hyper, string(p.pos)): // the first sense's hypernym
					default:
						continue
					}
					ts := data[ptr.pos][ptr.offset]
					if ts == nil {
						continue
					}
					for j, w := range ts.words {
						if (ptr.dst == 0 || ptr.dst == j+1) && common(w) {
							add(k, term(w))
						}
					}
				}
			}
		}
		f.Close()
	}

	// A word whose most frequent sense is a noun of an argument class.
	arg := map[string]bool{}
	for lemma, c := range class {
		if argClass[c] && !strings.ContainsAny(lemma, "_-.'0123456789") {
			if k := term(lemma); k != "" {
				arg[k] = true
			}
		}
	}
	// A stem of several lemmas is an argument only if none of them is
	// something else.
	for lemma, c := range class {
		if !argClass[c] && count[lemma] >= minCount {
			delete(arg, term(lemma))
		}
	}
	keys := make([]string, 0, len(rel))
	for k := range rel {
		keys = append(keys, k)
	}
	for k := range arg {
		if rel[k] == nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		rs := rel[k]
		if len(rs) > maxRelated {
			rs = rs[:maxRelated]
		}
		b.WriteString(k)
		if arg[k] {
			b.WriteString(":a")
		}
		for _, r := range rs {
			b.WriteString(" " + r)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d words, %d bytes", len(keys), b.Len())

	// Irregular verb forms (verb.exc: wrote → write, got → get) of common
	// verbs, unless the form is itself a common word (found, left, saw).
	// Forms that stemming already folds (tried) stay: search.Terms applies
	// this table, so leaving them out would not give the same table twice.
	f, err := os.Open(filepath.Join(*dir, "verb.exc"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	irr := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 2 || !common(fs[1]) || count[fs[0]] > 0 || strings.ContainsAny(fs[0], "_-.'0123456789") {
			continue
		}
		form, lemma := strings.ToLower(fs[0]), term(fs[1])
		if lemma == "" || search.Terms(form) == nil {
			continue
		}
		irr[form] = lemma
	}
	forms := make([]string, 0, len(irr))
	for w := range irr {
		forms = append(forms, w)
	}
	sort.Strings(forms)
	b.Reset()
	for _, w := range forms {
		b.WriteString(w + " " + irr[w] + "\n")
	}
	if err := os.WriteFile(*irregular, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d irregular forms, %d bytes", len(forms), b.Len())
}

// argClass are the lexicographer files of nouns that a request names as
// a tool's arguments rather than as what the tool does: animals, body,
// food, locations, natural objects, people, plants, quantities,
// substances, time.
var argClass = map[string]bool{"1:05": true, "1:08": true, "1:13": true, "1:15": true, "1:17": true,
	"1:18": true, "1:20": true, "1:23": true, "1:27": true, "1:28": true}

// readCounts sums the tagged uses of each lemma over its senses, and
// returns the class (part of speech:lexicographer file) of its most used
// sense.
func readCounts(path string) (map[string]int, map[string]string) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	m := map[string]int{}
	best := map[string]int{}
	class := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			continue
		}
		lemma, key, _ := strings.Cut(fs[0], "%")
		n, _ := strconv.Atoi(fs[2])
		m[lemma] += n
		if n > best[lemma] && len(key) >= 4 {
			best[lemma] = n
			class[lemma] = key[:4]
		}
	}
	return m, class
}

// readData reads a data.* file: synsets by offset.
func readData(path string) map[string]*synset {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	m := map[string]*synset{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue
		}
		line, _, _ = strings.Cut(line, " | ")
		fs := strings.Fields(line)
		nw, _ := strconv.ParseInt(fs[3], 16, 32)
		ss := &synset{}
		i := 4
		for range nw {
			w := strings.ToLower(fs[i])
			if p := strings.IndexByte(w, '('); p > 0 { // adjective markers: (a), (p), (ip)
				w = w[:p]
			}
			ss.words = append(ss.words, w)
			i += 2
		}
		np, _ := strconv.Atoi(fs[i])
		i++
		for range np {
			st := fs[i+3]
			src, _ := strconv.ParseInt(st[:2], 16, 32)
			dst, _ := strconv.ParseInt(st[2:], 16, 32)
			pos := fs[i+2][0]
			if pos == 's' {
				pos = 'a'
			}
			ss.ptrs = append(ss.ptrs, pointer{sym: fs[i], offset: fs[i+1], pos: pos, src: int(src), dst: int(dst)})
			i += 4
		}
		m[fs[0]] = ss
	}
	return m
}
