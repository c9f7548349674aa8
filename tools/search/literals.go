package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// stripLiterals removes from a query the literal values a request quotes
// or names — quoted strings ('Fix login', `npm test`), numbers and
// references (8080, #17, !42, 3pm), paths and file names (src/auth.go,
// ./src, config.yaml), a repository's or a branch's path ("in
// acme/widgets", feature/invoice-export), URLs and e-mail addresses — which are the
// arguments of a call, not what the tool does, and would otherwise count
// as query words no tool uses. Quoted strings are kept when fewer than two
// words would remain outside them (a model may quote what it looks for:
// "create issue" in gitlab); when nothing with letters would remain,
// query is returned unchanged. It also returns the kinds of the literals it
// strips (see literalKind). known reports whether the catalog uses a term
// (nil: whether it does is not asked).
func (lx *Lexicon) stripLiterals(query string, known func(string) bool) (string, []string) {
	var b strings.Builder
	rs := []rune(query)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if q := closingQuote(r); q != 0 && (i == 0 || !isWordRune(rs[i-1])) {
			if j := indexRune(rs[i+1:], q); j > 0 && (i+2+j >= len(rs) || !isWordRune(rs[i+2+j])) {
				b.WriteByte(' ')
				i += j + 1
				continue
			}
		}
		b.WriteRune(r)
	}
	text := b.String()
	if len(lx.terms(text)) < 2 {
		text = query
	}
	fs := strings.Fields(text)
	out := fs[:0]
	var kinds []string
	prev := ""
	for _, f := range fs {
		t := strings.TrimRight(f, ".,;:!?)")
		// A repository's path ("in web/storefront", acme/widgets-api, a
		// pair the catalog does not both know: acme/widgets) is a value;
		// a pair of words (free/busy, brands/vendors) is not.
		repo := repoPath(t) && !lx.slashPairs[t] && (strings.ContainsAny(t, "-_.0123456789") || lx.repoPreps[strings.ToLower(prev)] || known != nil && !lx.bothKnown(t, known))
		prev = f
		if !repo && !isLiteral(t) {
			out = append(out, f)
		} else if k := lx.literalKind(f); k != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	s := strings.Join(out, " ")
	if !strings.ContainsFunc(s, unicode.IsLetter) {
		return query, kinds
	}
	return s, kinds
}

func closingQuote(r rune) rune {
	switch r {
	case '\'', '"', '`':
		return r
	case '‘':
		return '’'
	case '“':
		return '”'
	}
	return 0
}

func indexRune(rs []rune, r rune) int {
	for i, x := range rs {
		if x == r {
			return i
		}
	}
	return -1
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isLiteral reports whether a query token is a value rather than a word:
// it starts with a digit or a reference sign (#17, !42, 8080, 3pm), or it
// is a phone number, path, URL, e-mail address or file name.
func isLiteral(f string) bool {
	f = strings.TrimLeft(f, "(")
	if f == "" {
		return false
	}
	if c := f[0]; c >= '0' && c <= '9' || (c == '#' || c == '!' || c == '@') && len(f) > 1 {
		return true
	}
	if phoneNumber(f) {
		return true
	}
	if strings.Contains(f, "://") || strings.HasPrefix(f, "./") || strings.HasPrefix(f, "~/") || strings.HasPrefix(f, "/") && len(f) > 1 {
		return true
	}
	if i := strings.IndexByte(f, '@'); i > 0 && strings.Contains(f[i:], ".") {
		return true
	}
	// A dotted name with letters on both sides: a file or host
	// (config.yaml, docs.example.com), not an abbreviation (e.g.).
	if i := strings.LastIndexByte(f, '.'); i > 0 && i < len(f)-1 && isWordRune(rune(f[i-1])) && isWordRune(rune(f[i+1])) && len(f)-i-1 >= 2 {
		return true
	}
	// An assignment (verified=true, status=open).
	if i := strings.IndexByte(f, '='); i > 0 && i < len(f)-1 {
		return true
	}
	// A path of three or more parts (src/lib/x), not an either-or (lat/long).
	return strings.Count(f, "/") >= 2
}

// stripNames removes from a query the words of the names it gives to the
// things it acts on — a run of capitalized words after a determiner and
// before the kind of thing it names ("my Downloads folder", "the
// Documents folder", "the Billing project") — that the catalog uses,
// unless a word of the name names a family ("the GitLab project"). Such a
// name is an argument; read as words, it would match tools that download
// or handle documents. A name's words the catalog does not use stay: as
// any unknown word, they lower the confidence ("the Slack channel" in a
// catalog without Slack).
func (ix *Index) stripNames(query string) string {
	lx := ix.lx
	fs := strings.Fields(query)
	drop := make([]bool, len(fs))
	any := false
	for i := 1; i < len(fs); i++ {
		if !lx.determiners[strings.ToLower(fs[i-1])] {
			continue
		}
		j := i
		for j < len(fs) && j-i < 3 && startsUpper(fs[j]) && strings.TrimRight(fs[j], ".,;:!?") == fs[j] {
			j++
		}
		if j == i || j >= len(fs) || !lx.containers[strings.ToLower(strings.TrimRight(fs[j], ".,;:!?"))] {
			continue
		}
		family := false
		for _, f := range fs[i:j] {
			if ix.famDF[stem(strings.ToLower(f))] > 0 { // CircleCI, whole
				family = true
			}
			for _, t := range lx.terms(f) {
				if ix.famDF[t] > 0 {
					family = true
				}
			}
		}
		if family {
			continue
		}
		for k := i; k < j; k++ {
			if ts := lx.terms(fs[k]); len(ts) > 0 && len(ix.post[ts[0]]) > 0 {
				drop[k] = true
				any = true
			}
		}
	}
	if !any {
		return query
	}
	out := fs[:0]
	for k, f := range fs {
		if !drop[k] {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

func startsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isUpper(r)
}

// literalKinds are the kinds of literal values literalKind tells apart.
var literalKinds = map[string]bool{"url": true, "file": true, "phone": true, "reference": true}

// literalKind returns the kind of a literal query token, as a term: "url"
// for a URL or a host (docs.example.com/pricing), "file" for a path or a
// file name, "phone" for an international phone number (+14155550123),
// "reference" for a tracker's number (#231: an issue, as trackers number
// them), "" for others (a number, an e-mail address: whom a call is about, not
// what the tool takes).
func (lx *Lexicon) literalKind(f string) string {
	f = strings.TrimRight(strings.Trim(f, "()<>[]\"'`,;:!?"), ".")
	switch {
	case f == "" || strings.IndexByte(f, '@') >= 0: // an address or its domain (@acme.io)
		return ""
	case phoneNumber(f):
		return "phone"
	case len(f) > 1 && f[0] == '#' && strings.Trim(f[1:], "0123456789") == "":
		return "reference"
	case strings.Contains(f, "://") || strings.HasPrefix(f, "www."):
		return "url"
	case strings.HasPrefix(f, "/") || strings.HasPrefix(f, "~/") || strings.HasPrefix(f, "./") || strings.Count(f, "/") >= 2:
		return "file"
	}
	host := f
	if i := strings.IndexByte(f, '/'); i > 0 {
		host = f[:i]
	}
	if i := strings.LastIndexByte(host, '.'); i > 0 && lx.tlds[strings.ToLower(host[i+1:])] && !strings.Contains(f[len(host):], ".") {
		return "url"
	}
	if i := strings.LastIndexByte(f, '.'); i > 0 && isExtension(f[i+1:]) {
		return "file"
	}
	return ""
}

// isExtension reports whether s looks like a file name's extension: one
// to four letters or digits, a letter among them (yaml, py, md, mp4).
func isExtension(s string) bool {
	if len(s) == 0 || len(s) > 4 {
		return false
	}
	letter := false
	for _, r := range s {
		if !isWordRune(r) {
			return false
		}
		letter = letter || unicode.IsLetter(r)
	}
	return letter
}

// phoneNumber reports whether f is an international phone number: + and
// seven to fifteen digits (+14155550123, +44-20-7946-0018).
func phoneNumber(f string) bool {
	if len(f) < 8 || f[0] != '+' {
		return false
	}
	n := 0
	for _, r := range f[1:] {
		switch {
		case r >= '0' && r <= '9':
			n++
		case r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return false
		}
	}
	return n >= 7 && n <= 15
}

// repoPath reports whether f is shaped as a repository's path: two parts
// of lower-case letters, digits, dots, - and _ (acme/widgets).
func repoPath(f string) bool {
	a, b, ok := strings.Cut(f, "/")
	if !ok || len(a) < 2 || len(b) < 2 || strings.Contains(b, "/") {
		return false
	}
	for _, r := range a + b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// bothKnown reports whether both words of a/b are words the catalog uses
// (free/busy, brands/vendors: a pair of words, not a repository).
func (lx *Lexicon) bothKnown(f string, known func(string) bool) bool {
	a, b, _ := strings.Cut(f, "/")
	ta, _ := lx.wordTerm(a)
	tb, _ := lx.wordTerm(b)
	return ta != "" && tb != "" && known(ta) && known(tb)
}
