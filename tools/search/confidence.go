package search

import "math"

// The confidence stage decides whether a query's best-ranked tools answer
// it (Result.Confident) or whether none fits well enough to be sure
// ("void the invoice" where no tool voids anything). It never empties an
// answer: one that is not confident holds the closest tools and the
// catalog's families.
//
// Five checks each once emptied a result on their own: a verb the catalog
// never says, a service it lacks, an action that meets no tool's object,
// a floor none of the best tools reaches, a query too vague.
//
// In a catalog the size of the real ones (gate-min-tools, tuning.txt), a
// logistic model decides. It weighs the five checks with what else the
// ranking knows: how well the best tools fit (their confidence against
// the floor, how much of the request and of their names they cover,
// whether their verb agrees, how well their server fits), how far they
// stand above the rest, the request's words the catalog never uses and
// what it implies. Its probability that the query is answered must reach
// gate-threshold. A request carries context no tool says (names, places,
// reasons), so no one check tells a near miss from a request that
// matches; the model weighs them together.
//
// In a smaller catalog, where what a query's best tools look like is not
// what that model learnt (one tool of forty meets much of any query), the
// checks decide and a second model, fitted to small catalogs, must agree
// (small-gate-threshold): a query no check fails is still not confident
// when that model finds it unlikely to be answered.
//
// The models are fitted to the labelled queries of the five real catalogs
// in testdata, the sets held out to measure them excepted (gateHeldOut in
// gate_test.go): a no-match request is a 0, an answerable query whose tool
// is among the three best a 1. The small catalogs' model is fitted to the
// same queries on small catalogs cut from the real ones (a few whole
// servers, 20 to 60 tools; subsets_test.go), where a query whose tools
// are all outside the cut is a no-match request too. TestGateWeights
// refits both and checks gate.txt; TestGateLeftOut fits each on four
// catalogs and judges it on the fifth. Their features are shares and
// ratios, not raw scores, which depend on how much text a catalog's tools
// have. docs/measurements/search.md says what they gained.

// gateX is a query's features, indexed by the constants below.
type gateX [nGate]float64

// The features. The first five are the checks that each once emptied a
// result on its own.
const (
	gUnknownVerb = iota // the request's verb, first, is one the catalog never says
	gAbsent             // it names a service the catalog lacks
	gAmo                // its action meets none of its objects in any tool (actionMeetsObject)
	gFloor              // none of the best tools fits above the floor
	gVague              // many tools fit it about equally
	gGroups             // its words
	gFloorLevel         // the floor for its length
	gSpecific           // it says a rare word
	gQuestion
	gVerb        // it says a verb
	gFamily      // it names a family
	gUnknownName // it names, capitalized, something the catalog does not know
	gUnknown     // its words the catalog never uses
	gUnknownCover
	gMaxConf // the best confidence of the gate-window best tools
	gConcept // one of the three best tools says what it implies
	gConcepts
	gConf0Floor // the best tool's confidence over the floor
	gMaxConfFloor
	gMax3Floor
	gConf0
	gConf1
	gConf2
	gScore1 // the second tool's score over the best's
	gScore2
	gTop  // then, for each of the three best tools: qcov, ncov, object, agrees, server share
	nGate = gTop + 3*5
)

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// gateFeatures fills x (whose five checks rank has set) from q (inFam:
// it names a family) and all, its ranking; top gives, for a tool, its
// query coverage, name coverage, object strength, verb agreement (1, 0,
// -1) and its server's share of the best server score.
func (ix *Index) gateFeatures(x *gateX, q *query, inFam bool, all []Hit, top func(int32) [5]float64) {
	x[gGroups] = float64(len(q.groups))
	x[gFloorLevel] = q.floor
	x[gSpecific] = b2f(q.specific)
	x[gQuestion] = b2f(q.question)
	x[gVerb] = b2f(q.qVerb)
	x[gFamily] = b2f(inFam)
	x[gUnknownName] = b2f(q.unknownName)
	var unk, unkCover float64
	for _, g := range q.groups {
		if len(ix.post[g.terms[0]]) == 0 {
			unk++
			unkCover += g.cover
		}
	}
	x[gUnknown] = unk
	x[gUnknownCover] = unkCover / max(q.coverTotal, 1e-9)
	var conf, score [3]float64
	var maxConf, max3 float64
	for k, h := range all {
		if k >= ix.tn.gateWindow {
			break
		}
		maxConf = max(maxConf, h.Confidence)
		if k < 3 {
			conf[k], score[k] = h.Confidence, h.Score
			max3 = max(max3, h.Confidence)
			i := int32(ix.byName[h.Tool.Name])
			if ix.namesConcept(i, q.concepts) {
				x[gConcept] = 1
			}
			t := top(i)
			copy(x[gTop+5*k:gTop+5*k+5], t[:])
		}
	}
	x[gMaxConf] = maxConf
	x[gConcepts] = float64(len(q.concepts))
	x[gConf0Floor] = conf[0] / q.floor
	x[gMaxConfFloor] = maxConf / q.floor
	x[gMax3Floor] = max3 / q.floor
	x[gConf0], x[gConf1], x[gConf2] = conf[0], conf[1], conf[2]
	if score[0] > 0 {
		x[gScore1], x[gScore2] = score[1]/score[0], score[2]/score[0]
	}
}

// gateProb is the model's probability that the request is answered
// (gateWeight and gateBias: the fitted model of gate.txt, its
// standardization folded in).
func (t *tuning) gateProb(x *gateX) float64 { return logistic(&t.gateWeight, t.gateBias, x) }

// smallGateProb is the small catalogs' model's probability that the
// request is answered.
func (t *tuning) smallGateProb(x *gateX) float64 {
	return logistic(&t.smallGateWeight, t.smallGateBias, x)
}

// logistic is a logistic model's probability for x.
func logistic(weight *gateX, bias float64, x *gateX) float64 {
	z := bias
	for i, v := range x {
		z += weight[i] * v
	}
	return 1 / (1 + math.Exp(-z))
}
