package search

import (
	"context"
	"slices"
	"strings"

	"github.com/sandcall/sandcall/tools"
)

// Hit is one ranked tool.
type Hit struct {
	Tool  *tools.Tool
	Score float64
	// Confidence is how well the tool fits the query, from 0 to 1: mostly
	// (0.8) how much of the query it covers — each word weighted by its
	// rarity, a match in the name, family or summary counting fully, in
	// the description 0.7, in a parameter 0.4 — and (0.2) how much of its
	// name the query says; 1 for a query naming the tool exactly. The
	// answer's Confident is the decision; a hit's Confidence is one of its
	// inputs.
	Confidence float64
}

// Result is a search's answer.
type Result struct {
	// Hits are the tools that fit the query, best first. When Confident
	// is false they are the closest few (at most tuning.txt's closest), none of which
	// fits the query well enough to be sure; there may be none when no
	// tool shares a word with it.
	Hits []Hit
	// Total is how many tools fit in all: more than len(Hits) when the
	// limit cut them (len(Hits) when not confident).
	Total int
	// Confident reports whether the hits answer the query (see
	// confidence.go). A query naming a tool exactly, or a family, is
	// answered confidently.
	Confident bool
	// Families are the families of the catalog (its servers, or the
	// prefixes tools share) the caller may search, when the answer is not
	// confident: where to look further, by searching one's name.
	Families []Family
}

// Family is a family of tools: an upstream server, or a name prefix
// several tools share.
type Family struct {
	Name  string
	Tools int // how many of its tools the search could return
}

// Search ranks the tools for query and returns the best, at most limit of
// them (all if limit ≤ 0), and whether they answer it (see Result). It
// never answers with nothing for want of confidence: when no tool fits
// confidently, it returns the closest few, marked so, with the catalog's
// families. keep, if not nil, restricts the search to the tools it
// accepts (the ones the caller may call, say); the others are neither
// returned nor counted. A query naming a tool exactly ranks that tool
// first.
func (ix *Index) Search(ctx context.Context, query string, limit int, keep func(*tools.Tool) bool) Result {
	r := ix.rank(ctx, query, limit, keep, false)
	res := Result{Hits: r.hits, Total: r.total, Confident: r.confident(ix.tn)}
	if r.usesFallback() {
		// A request that names a family but that no tool fits above the
		// floor is answered by the family's tools that do its action.
		res.Hits = r.fallback
		if limit > 0 && len(res.Hits) > limit {
			res.Hits = res.Hits[:limit]
		}
		res.Total = len(res.Hits)
	}
	if !res.Confident {
		// The closest few: as many as search_tools shows at a limit of 5
		// (tuning.txt's closest), so that the decision costs no query a
		// right tool in its first five.
		res.Hits = r.closest
		n := ix.tn.closest
		if limit > 0 {
			n = min(n, limit)
		}
		res.Hits = res.Hits[:min(len(res.Hits), n)]
		res.Total = len(res.Hits)
		res.Families = ix.familyList(keep)
	}
	return res
}

// ranked is what the pipeline knows of a query once it has ranked the
// tools: the hits, their total, the closest tools whatever the checks,
// the gate's features (the checks, and when weighed the model's), and the
// tools a short request that names a family falls back on.
type ranked struct {
	hits     []Hit
	total    int
	closest  []Hit
	x        gateX
	fallback []Hit
	// weighed: a model decides (see confidence.go), small: the small
	// catalogs' one; exact: the query names a tool exactly; family: it
	// asks about a family as a whole.
	weighed, small, exact, family bool
}

// confident reports whether r's hits answer its query: a tool named
// exactly does, a family asked about does; otherwise, in a large catalog,
// the model decides; in a small one, the checks do and the small
// catalogs' model must agree (see confidence.go).
func (r *ranked) confident(tn *tuning) bool {
	switch {
	case len(r.hits) == 0:
		return false
	case r.exact, r.family:
		return true
	case r.weighed && !r.small:
		return tn.gateProb(&r.x) >= tn.gateThreshold
	case r.x[gUnknownVerb]+r.x[gAbsent]+r.x[gAmo]+r.x[gVague] > 0:
		return false
	case r.x[gFloor] > 0 && len(r.fallback) == 0:
		return false
	case r.weighed:
		return tn.smallGateProb(&r.x) >= tn.smallGateThreshold
	}
	return true
}

// usesFallback reports whether r is answered by its family's fallback:
// the checks decide, and its best tools fit under the floor.
func (r *ranked) usesFallback() bool {
	return !r.exact && !r.family && (!r.weighed || r.small) && r.x[gUnknownVerb]+r.x[gAbsent]+r.x[gAmo]+r.x[gVague] == 0 && r.x[gFloor] > 0 && len(r.fallback) > 0
}

// rank runs the pipeline on query: analyze, match (BM25F), rerank
// (Lexical, then the index's Reranker), scope (the family a query asks
// about or a request names), checks and the cut at limit. When
// model is set, the model's features are read for every query but a tool
// named exactly (to fit it); otherwise only for a query the model decides.
func (ix *Index) rank(ctx context.Context, text string, limit int, keep func(*tools.Tool) bool, model bool) (r ranked) {
	q := ix.analyze(text)
	if q == nil {
		// A query of stop words only may still be a family's name (a
		// server called "everything").
		if k := ix.askedFamily(&query{lx: ix.lx, text: capText(text, MaxQueryBytes), exact: -1}); k >= 0 {
			hits := ix.familyHits(k, nil, keep)
			r.family = len(hits) > 0
			r.answer(hits, limit)
		}
		return r
	}
	r.exact = q.exact >= 0
	// A request whose verb, first, the catalog never says, nor a synonym
	// or a related word of it, asks for what no tool does ("void the
	// invoice", "install the plugin").
	r.x[gUnknownVerb] = b2f(q.exact < 0 && !q.question && ix.opensUnknownVerb(q.plain))
	// A request that names a well-known service the catalog never
	// mentions, and none of the catalog's families, asks for a tool of
	// that service ("create a jira ticket" beside Linear).
	r.x[gAbsent] = b2f(q.exact < 0 && ix.namesAbsentService(q.text, q.plain) && !ix.namesAnyFamily(q))
	// A model weighs every query: the one fitted to catalogs of the
	// catalog's size (see confidence.go).
	model = true
	r.small = len(ix.docs) < ix.tn.gateMinTools
	m := ix.match(q)
	f := &Query{ix: ix, q: q, m: m, model: model}
	all, weak := ix.order(ctx, f, ix.candidates(m, keep))
	// A query about a family as a whole is answered with its tools.
	if k := ix.askedFamily(q); k >= 0 {
		scored := append(slices.Clone(all), weak...)
		sortHits(scored)
		hits := ix.familyHits(k, scored, keep)
		r.family = len(hits) > 0
		r.answer(hits, limit)
		return r
	}
	if len(all) == 0 {
		// The closest tools are those that share a word with the query
		// but too little of their names.
		r.closest = weak
		return r
	}
	all, inFam, fallback := ix.scope(q, all)
	r.fallback = fallback
	// A request that asks for an action on a thing tools act on ("delete
	// the Airtable base") but that no tool — of the family it names, if it
	// names one — meets both in is asking for what the catalog lacks: the
	// tools that do the action to something else, or something else to
	// the thing, are near misses.
	r.x[gAmo] = b2f(ix.missesObject(q, inFam, keep))
	r.x[gFloor] = b2f(!ix.fits(q, all))
	if len(all) == 0 {
		return r
	}
	out, vague := ix.cut(all)
	r.x[gVague] = b2f(vague)
	r.weighed = model && all[0].Score < 1e6
	if r.weighed {
		ix.gateFeatures(&r.x, q, len(inFam) > 0, out, func(i int32) [5]float64 {
			sh := 0.0
			if k := ix.srcOf[i]; k >= 0 && f.srvMax > 0 {
				sh = f.srvScore[k] / f.srvMax
			}
			qc := 0.0
			if q.coverTotal > 0 {
				qc = m.cover[i] / q.coverTotal
			}
			return [5]float64{qc, f.ncov[i], m.objCover[i], float64(q.agrees(&ix.docs[i])), sh}
		})
	}
	r.answer(out, limit)
	return r
}

// answer sets r's hits (at most limit, if > 0), their total and the
// closest of them.
func (r *ranked) answer(hits []Hit, limit int) {
	r.total = len(hits)
	r.closest = hits
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	r.hits = hits
}

// sortHits sorts hits best first, by name when scores tie.
func sortHits(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int { return byScore(a.Score, b.Score, a.Tool.Name, b.Tool.Name) })
}

// order scores cands with Lexical and, over the best rerankDepth, the
// index's Reranker, and returns them best first, less those scored 0 and
// the weak ones (see Candidate). When no candidate but weak ones remains,
// those are the closest tools: they are returned sorted, and reranked;
// otherwise unsorted.
func (ix *Index) order(ctx context.Context, q *Query, cands []Candidate) (all, weak []Hit) {
	_ = Lexical{}.Rerank(ctx, q, cands)
	for _, c := range cands {
		switch {
		case c.Score == 0:
		case c.weak:
			weak = append(weak, Hit{Tool: c.Tool, Score: c.Score, Confidence: c.Confidence})
		default:
			all = append(all, Hit{Tool: c.Tool, Score: c.Score, Confidence: c.Confidence})
		}
	}
	closest := len(all) == 0
	if closest {
		all, weak = weak, nil
	}
	sortHits(all)
	if ix.reranker != nil {
		ix.rerankBest(ctx, q, all)
	}
	if closest {
		return nil, all
	}
	return all, weak
}

// rerankBest lets the index's Reranker reorder the best rerankDepth of
// best (sorted; a tool named exactly stays first). Its scores only order:
// the lexical scores stay in their places, so the cut and the confidence
// decision read the scale they were tuned on, and each tool keeps its own
// confidence. On an error the order stands.
func (ix *Index) rerankBest(ctx context.Context, q *Query, best []Hit) {
	top := best
	if len(top) > 0 && top[0].Score >= 1e6 {
		top = top[1:]
	}
	top = top[:min(len(top), ix.rerankDepth)]
	if len(top) < 2 {
		return
	}
	cands := make([]Candidate, len(top))
	for i, h := range top {
		cands[i] = Candidate{Tool: h.Tool, Score: h.Score, Confidence: h.Confidence, doc: int32(ix.byName[h.Tool.Name])}
	}
	if err := ix.reranker.Rerank(ctx, q, cands); err != nil {
		return
	}
	sortCandidates(cands)
	for i, c := range cands {
		top[i] = Hit{Tool: c.Tool, Score: top[i].Score, Confidence: c.Confidence}
	}
}

// sortCandidates sorts cands best first, by name when scores tie.
func sortCandidates(cands []Candidate) {
	slices.SortFunc(cands, func(a, b Candidate) int { return byScore(a.Score, b.Score, a.Tool.Name, b.Tool.Name) })
}

// byScore orders by score, higher first, then by name.
func byScore(sa, sb float64, na, nb string) int {
	switch {
	case sa > sb:
		return -1
	case sa < sb:
		return 1
	}
	return strings.Compare(na, nb)
}
