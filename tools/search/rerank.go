package search

import (
	"context"
	"slices"

	"github.com/sandcall/sandcall/tools"
)

// The rerank stage: a Reranker scores the tools a query's words matched.
// The ranking's own is Lexical, today's features: a tool's BM25F score,
// scaled by how much of the query it covers and how much of its name the
// query says, by how well its server's whole vocabulary fits the query,
// and by whether its name's verb is the one the query asks for; with its
// confidence. A second, optional one (Options.Reranker; Embeddings is one)
// reorders the best of Lexical's ranking.

// Reranker scores the candidates of a query: it sets each one's Score,
// higher first. An error leaves the scores as they were: the search
// keeps the order it had (it fails open).
type Reranker interface {
	Rerank(ctx context.Context, q *Query, cands []Candidate) error
}

// Query is a query as a Reranker reads it.
type Query struct {
	ix *Index
	q  *query
	m  *matches
	// model: keep each tool's name coverage for the gate's model.
	model bool
	// What Lexical leaves for the later stages.
	ncov     []float64 // each document's name coverage (filled for the model)
	srvScore []float64 // each server's fit (see serverScores)
	srvMax   float64   // the best server's
}

// Text is the query as the caller wrote it (capped at MaxQueryBytes).
func (q *Query) Text() string { return q.q.text }

// Candidate is a tool a query's words matched.
type Candidate struct {
	Tool *tools.Tool
	// Score orders the candidates, higher first; 0 drops one.
	Score float64
	// Confidence is how well the tool fits the query, from 0 to 1 (see
	// Hit); a Reranker other than Lexical leaves it.
	Confidence float64
	doc        int32
	// weak: the tool says too little of its name for a query of common
	// words; it is only one of the closest, when nothing else fits.
	weak bool
}

// Lexical is the ranking's own Reranker, today's features (see the
// package doc and tuning.go): it needs the Query of an Index, and sets
// Score and Confidence.
type Lexical struct{}

// Rerank implements Reranker.
func (Lexical) Rerank(_ context.Context, Q *Query, cands []Candidate) error {
	ix, q, m := Q.ix, Q.q, Q.m
	lx := ix.lx
	if len(ix.srcNorm) > 1 {
		Q.srvScore, Q.srvMax = ix.serverScores(q.groups)
	}
	// For a query of common words: the tools whose summary says one of
	// the verbs the query says in full.
	var summaryVerb map[int32]bool
	if !q.specific {
		for _, g := range q.groups {
			if !lx.verbs[g.terms[0]] || g.qw < 1 {
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
	if Q.model {
		Q.ncov = make([]float64, len(ix.docs))
	}
	for ci := range cands {
		c := &cands[ci]
		i := c.doc
		d := &ix.docs[i]
		qcov := 0.0
		if q.coverTotal > 0 {
			qcov = m.cover[i] / q.coverTotal
		}
		// How much of the tool's name the query says.
		var nameIDF, nameHit, verbHit float64
		objSaid := false // the query says a word of the name other than a verb
		for k, w := range d.name {
			x := d.nameIDF[k]
			nameIDF += x
			qv := q.inQuery[w]
			nameHit += x * qv
			if q.specific {
				continue
			}
			v := d.nameVerb[k]
			objSaid = objSaid || !v && qv > 0
			// A name's verb that the query says in other words its summary
			// uses counts as said, for a query of common words ("rename a
			// file": move_file, "Move or rename files").
			if qv < 1 && v && summaryVerb[i] {
				verbHit += x * (1 - qv)
			}
		}
		ncov := 0.0
		if nameIDF > 0 {
			ncov = nameHit / nameIDF
		}
		conf := min(1, ix.tn.confQuery*qcov+(1-ix.tn.confQuery)*ncov)
		if m.objCover[i] < 1 {
			conf *= ix.tn.noObject
		}
		s := m.score[i] * (ix.tn.qBase + qcov) * (1 + ix.tn.nameBoost*ncov)
		// A tool of a server whose whole vocabulary fits the request better
		// ranks higher (see serverScores).
		if k := ix.srcOf[i]; k >= 0 && Q.srvMax > 0 {
			s *= 1 + ix.tn.serverBoost*Q.srvScore[k]/Q.srvMax
		}
		if q.unknownName {
			conf *= ix.tn.brandConf
		}
		switch q.agrees(d) {
		case 1:
			s *= ix.tn.verbBoost
		case -1:
			s *= ix.tn.verbPenalty
			if q.writeOnly && d.readsOnly(lx) {
				s *= ix.tn.readOnlyPenalty
			}
		}
		if int(i) == q.exact {
			c.Score, c.Confidence = 1e6+s, 1
			continue
		}
		if !objSaid {
			verbHit = 0
		}
		c.Score, c.Confidence = s, conf
		c.weak = !q.specific && (nameHit+verbHit)/max(nameIDF, 1e-9) < ix.tn.nameCover(q.famNamed)
		if Q.model && !c.weak {
			Q.ncov[i] = ncov
		}
	}
	return nil
}

// candidates are the tools m matched that keep accepts, in the order met.
func (ix *Index) candidates(m *matches, keep func(*tools.Tool) bool) []Candidate {
	out := make([]Candidate, 0, len(m.seen))
	for _, i := range m.seen {
		if t := ix.docs[i].tool; keep == nil || keep(t) {
			out = append(out, Candidate{Tool: t, doc: i})
		}
	}
	return out
}

// agrees reports whether d's name has a verb the query asks for (1), only
// other verbs (-1), or neither a verb nor a query's (0): a question that
// says none asks for reading (get, list, …).
func (q *query) agrees(d *doc) int {
	lx := q.lx
	if len(d.verb) == 0 && q.action[lx.createVerb] && lx.writable[d.head] {
		return 1 // issues_comment writes a comment (see actionMeetsObject)
	}
	if len(d.verb) == 0 || !q.qVerb && !q.question {
		return 0
	}
	for _, v := range d.verb {
		if q.action[v] || q.question && slices.Contains(lx.readVerbs, v) {
			return 1
		}
	}
	return -1
}

// nameCover is the least share of a tool's name (by idf) that a query of
// common words only must say: in a family the query names for sure,
// fam-name-cover, otherwise common-name-cover.
func (t *tuning) nameCover(famNamed bool) float64 {
	if famNamed {
		return t.famNameCover
	}
	return t.commonNameCover
}
