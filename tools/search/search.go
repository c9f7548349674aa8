package search

import (
	"sort"

	"github.com/sandcall/sandcall/tools"
)

// Hit is one ranked tool.
type Hit struct {
	Tool  *tools.Tool
	Score float64
	// Confidence is how well the tool fits the query, from 0 to 1 (see
	// the package doc); 1 for a query naming the tool exactly.
	Confidence float64
}

// Search returns the tools that match query, best first, at most limit of
// them (all if limit ≤ 0), and how many matched in all; nothing when the
// gate judges that no tool answers it (see confidence.go). A hit's own
// confidence may be lower than the floor. keep, if not nil, restricts the
// search to the tools it accepts (the ones the caller may call, say); the
// others are neither returned nor counted. A query naming a tool exactly
// ranks that tool first.
func (ix *Index) Search(query string, limit int, keep func(*tools.Tool) bool) (hits []Hit, total int) {
	r := ix.rank(query, limit, keep, false)
	switch {
	case r.weighed:
		if gateProb(&r.x) < gateThreshold {
			return nil, 0
		}
	case r.x[gUnknownVerb]+r.x[gAbsent]+r.x[gAmo]+r.x[gVague] > 0:
		return nil, 0
	case r.x[gFloor] > 0:
		// A request that names a family but that no tool fits above the
		// floor falls back on the family's tools that do its action.
		fallback := r.fallback
		if limit > 0 && len(fallback) > limit {
			fallback = fallback[:limit]
		}
		return fallback, len(fallback)
	}
	return r.hits, r.total
}

// ranked is what the pipeline knows of a query once it has ranked the
// tools: the hits, their total, the gate's features (the checks, and when
// weighed the model's), and the tools a short request that names a family
// falls back on.
type ranked struct {
	hits     []Hit
	total    int
	x        gateX
	fallback []Hit
	// weighed: the model decides (see confidence.go).
	weighed bool
}

// rank runs the pipeline on query: analyze, match (BM25F), features,
// scope (the family a request names), checks and the cut at limit. When
// model is set, the model's features are read for every query but a tool
// named exactly (to fit it); otherwise only for a query the model decides,
// and a check that fails ends the ranking early, the checks alone
// deciding.
func (ix *Index) rank(text string, limit int, keep func(*tools.Tool) bool, model bool) (r ranked) {
	q := ix.analyze(text)
	if q == nil {
		return r
	}
	// A request whose verb, first, the catalog never says, nor a synonym
	// or a related word of it, asks for what no tool does ("void the
	// invoice", "install the plugin").
	r.x[gUnknownVerb] = b2f(q.exact < 0 && !q.question && ix.opensUnknownVerb(q.plain))
	// A request that names a well-known service the catalog never
	// mentions, and none of the catalog's families, asks for a tool of
	// that service ("create a jira ticket" beside Linear).
	r.x[gAbsent] = b2f(q.exact < 0 && ix.namesAbsentService(q.text, q.plain) && !ix.namesAnyFamily(q))
	// The model weighs a request longer than shortQuery words in a catalog
	// the size of the ones it was fitted to (see confidence.go); the
	// checks alone decide the others.
	model = model || len(ix.docs) >= gateMinTools && float64(len(q.groups)) > shortQuery
	if !model && r.x[gUnknownVerb]+r.x[gAbsent] > 0 {
		return r
	}
	m := ix.match(q)
	f := ix.features(q, m, keep, model)
	if len(f.all) == 0 {
		return r
	}
	all, inFam, fallback := ix.scope(q, f.all)
	r.fallback = fallback
	// A request that asks for an action on a thing tools act on ("delete
	// the Airtable base") but that no tool — of the family it names, if it
	// names one — meets both in is asking for what the catalog lacks: the
	// tools that do the action to something else, or something else to
	// the thing, are near misses.
	if ix.missesObject(q, inFam, keep) {
		r.x[gAmo] = 1
		if !model {
			return ranked{x: r.x}
		}
	}
	r.x[gFloor] = b2f(!ix.fits(q, all))
	if len(all) == 0 {
		return ranked{x: r.x}
	}
	// cut filters all in place: the model was fitted to features read
	// from all's first five, which past out's end are what the cut left
	// there.
	out, vague := ix.cut(all)
	r.x[gVague] = b2f(vague)
	r.weighed = model && all[0].Score < 1e6
	if r.weighed {
		ix.gateFeatures(&r.x, q, len(inFam) > 0, all, func(i int32) [5]float64 {
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
	r.total = len(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	r.hits = out
	return r
}

// sortHits sorts hits best first, by name when scores tie.
func sortHits(hits []Hit) {
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Tool.Name < hits[j].Tool.Name
	})
}
