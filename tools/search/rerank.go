package search

import (
	"slices"

	"github.com/sandcall/sandcall/tools"
)

// The features stage: a tool's BM25F score, scaled by how much of the
// query it covers and how much of its name the query says, by how well
// its server's whole vocabulary fits the query, and by whether its name's
// verb is the one the query asks for; with its confidence (see the
// package doc). A query of common words only keeps the tools whose name it
// mostly says.

// features is the features stage's output.
type features struct {
	all      []Hit     // the candidates, best first
	weak     []Hit     // the tools matched but dropped for saying too little of their name, unsorted
	ncov     []float64 // each document's name coverage (filled for the model)
	srvScore []float64 // each server's fit (see serverScores)
	srvMax   float64   // the best server's
}

// features ranks the tools m matched that keep accepts (model: also keep
// each one's name coverage, for the gate's model).
func (ix *Index) features(q *query, m *matches, keep func(*tools.Tool) bool, model bool) *features {
	lx := ix.lx
	f := &features{}
	if len(ix.srcNorm) > 1 {
		f.srvScore, f.srvMax = ix.serverScores(q.groups)
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
	if model {
		f.ncov = make([]float64, len(ix.docs))
	}
	for _, i := range m.seen {
		d := &ix.docs[i]
		if keep != nil && !keep(d.tool) {
			continue
		}
		qcov := 0.0
		if q.coverTotal > 0 {
			qcov = m.cover[i] / q.coverTotal
		}
		// How much of the tool's name the query says.
		var nameIDF, nameHit, verbHit float64
		objSaid := false // the query says a word of the name other than a verb
		for _, w := range d.name {
			x := ix.idf(w)
			nameIDF += x
			qv := q.inQuery[w]
			nameHit += x * qv
			if q.specific {
				continue
			}
			v := lx.verbs[w]
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
		conf := min(1, confQuery*qcov+(1-confQuery)*ncov)
		if m.objCover[i] < 1 {
			conf *= noObject
		}
		s := m.score[i] * (qBase + qcov) * (1 + nBoost*ncov)
		// A tool of a server whose whole vocabulary fits the request better
		// ranks higher (see serverScores).
		if k := ix.srcOf[i]; k >= 0 && f.srvMax > 0 {
			s *= 1 + serverBoost*f.srvScore[k]/f.srvMax
		}
		if q.unknownName {
			conf *= brandConf
		}
		switch q.agrees(d) {
		case 1:
			s *= verbBoost
		case -1:
			s *= verbPenalty
			if q.writeOnly && d.readsOnly(lx) {
				s *= readOnlyPenalty
			}
		}
		if int(i) == q.exact {
			f.all = append(f.all, Hit{Tool: d.tool, Score: 1e6 + s, Confidence: 1})
			continue
		}
		if !objSaid {
			verbHit = 0
		}
		if s == 0 {
			continue
		}
		if !q.specific && (nameHit+verbHit)/max(nameIDF, 1e-9) < nameCover(q.famNamed) {
			f.weak = append(f.weak, Hit{Tool: d.tool, Score: s, Confidence: conf})
			continue
		}
		f.all = append(f.all, Hit{Tool: d.tool, Score: s, Confidence: conf})
		if model {
			f.ncov[i] = ncov
		}
	}
	sortHits(f.all)
	return f
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
// famNameCover, otherwise commonNameCover.
func nameCover(famNamed bool) float64 {
	if famNamed {
		return famNameCover
	}
	return commonNameCover
}
