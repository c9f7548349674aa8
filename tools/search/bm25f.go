package search

import "math"

// The match stage: BM25F. Each tool is a document of five fields, each
// with its weight and length normalization (see tuning.go); a query's
// group scores a tool by its best term there, a synonym at its weight.
// What this stage reads for each tool: its score, how much of the query
// it covers (each group by its rarity, a field's match by the field's
// strength) and how strongly it meets a word other than a verb.

// fields of a document.
const (
	fName    = iota // the action words of its name (its family prefix removed)
	fFamily         // its family: its server, or a shared first name word
	fSummary        // its title and the first sentence of its description
	fDesc           // the rest of its description
	fParams         // its parameters' names, descriptions and enum values
	nFields
)

// matches is the match stage's output, indexed by document.
type matches struct {
	score    []float64 // BM25F
	cover    []float64 // the query's coverage, in cover units (see group.cover)
	objCover []float64 // the best field strength of a word other than a verb
	seen     []int32   // the documents that match a group, in the order met
}

// match scores every tool that meets a group of q.
func (ix *Index) match(q *query) *matches {
	lx := ix.lx
	nd := len(ix.docs)
	m := &matches{score: make([]float64, nd), cover: make([]float64, nd), objCover: make([]float64, nd)}
	gScore := make([]float64, nd)
	gCover := make([]float64, nd)
	gStr := make([]float64, nd)
	touched := make([]bool, nd)
	for _, g := range q.groups {
		clear(gScore)
		clear(gCover)
		clear(gStr)
		var gDocs []int32
		for j, w := range g.terms {
			// A family's name says which server, not which of its tools:
			// only the family field counts it (a tool whose description
			// repeats "MongoDB" is no better a MongoDB tool).
			famOnly := ix.sureFamily(q, w)
			for _, p := range ix.post[w] {
				d := &ix.docs[p.doc]
				var tfc, str float64
				for f := 0; f < nFields; f++ {
					if p.tf[f] > 0 && (!famOnly || f == fFamily) {
						tfc += ix.tn.fieldWeight[f] * float64(p.tf[f]) / (1 - ix.tn.fieldB[f] + ix.tn.fieldB[f]*float64(d.len[f])/ix.avgLen[f])
						str = max(str, ix.tn.fieldStrength[f])
					}
				}
				s := g.qw * g.weight[j] * g.idf[j] * tfc * (ix.tn.k1 + 1) / (ix.tn.k1 + tfc)
				if gScore[p.doc] == 0 && gCover[p.doc] == 0 {
					gDocs = append(gDocs, p.doc)
				}
				gScore[p.doc] = max(gScore[p.doc], s)
				gCover[p.doc] = max(gCover[p.doc], g.weight[j]*str)
				gStr[p.doc] = max(gStr[p.doc], str)
			}
		}
		for _, i := range gDocs {
			m.score[i] += gScore[i]
			m.cover[i] += gCover[i] * g.cover
			if !lx.verbs[g.terms[0]] {
				m.objCover[i] = max(m.objCover[i], gStr[i])
			}
			if !touched[i] {
				touched[i] = true
				m.seen = append(m.seen, i)
			}
		}
	}
	if q.exact >= 0 && !touched[q.exact] {
		m.seen = append(m.seen, int32(q.exact))
	}
	return m
}

// serverScores scores each server by BM25 of the query's groups over all
// its tools' text, and returns the best score: a request's everyday words
// ("text +1…", "our books") are likelier in a server's whole vocabulary
// than in the one tool that serves it, so the server that fits the whole
// request lends its tools server-boost × its share of the best score.
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
				gs[p.srv] = max(gs[p.srv], idf*tf*(ix.tn.k1+1)/(tf+ix.tn.k1*ix.srcNorm[p.srv]))
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
