package expense

import (
	"math"
	"strconv"
	"strings"

	"github.com/sandcall/sandcall/examples/internal/jsmath"
)

// This file ports testdata/reference-data.mjs, the standard workload's
// specification of the demo data, to Go. Every number is computed with the
// same IEEE-754 operations in the same order, so the JSON is byte-identical.
// Products are wrapped in float64(...) so that no compiler may fuse them
// into a multiply-add (the Go spec allows fusing otherwise; JS never fuses).

// The workload's fixed parameters.
const (
	Department     = "engineering"
	Quarter        = "Q3"
	TeamSize       = 50
	RowsPerMember  = 40
	budgetCurrency = "USD"
)

// fnv1a is FNV-1a over the string's UTF-16 code units (charCodeAt). The
// tools accept ASCII only, where code units and bytes agree.
func fnv1a(s string) uint32 {
	h := uint32(0x811c9dc5)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 0x01000193
	}
	return h
}

// mulberry32 is the reference PRNG. All of its JS int32/uint32 arithmetic
// (Math.imul, >>>, ^, and an addition later truncated by ^) is arithmetic
// modulo 2^32, which uint32 does exactly.
type mulberry32 uint32

func (a *mulberry32) next() float64 {
	*a += 0x6d2b79f5
	t := uint32(*a)
	t = (t ^ (t >> 15)) * (t | 1)
	t ^= t + (t^(t>>7))*(t|61)
	return float64(t^(t>>14)) / 4294967296
}

// pick returns Math.floor(r() * n) for a list of length n.
func (a *mulberry32) pick(n int) int {
	return int(math.Floor(float64(a.next() * float64(n))))
}

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Dennis", "Margaret",
		"Linus", "Radia", "John", "Shafi", "Leslie", "Tony", "Niklaus", "Hedy", "Katherine", "Guido"}
	lastNames = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Ritchie", "Hamilton",
		"Torvalds", "Perlman", "McCarthy", "Goldwasser", "Lamport", "Hoare", "Wirth", "Lamarr", "Johnson", "Rossum"}
	categories = []string{"travel", "travel", "travel", "meals", "meals", "software", "equipment", "training", "office"}
	vendors    = []string{"Acme Travel", "Globex Air", "Initech Hotels", "Umbrella Rail", "Stark Cabs", "Wayne Catering",
		"Hooli Cloud", "Vandelay Supply", "Soylent Foods", "Tyrell Learning"}
	purposes = []string{"customer onsite visit", "quarterly planning offsite", "conference attendance", "team dinner",
		"license renewal", "replacement laptop dock", "certification course", "recruiting trip", "partner workshop",
		"incident response travel"}
	projects = []string{"Apollo", "Borealis", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Helios"}
)

// levels are the employee levels, in order; travelLimits their quarterly
// travel budgets in USD.
var (
	levels       = []string{"L1", "L2", "L3", "L4", "L5"}
	travelLimits = map[string]int{"L1": 2500, "L2": 3500, "L3": 5000, "L4": 6500, "L5": 8000}
)

// Member is one team member.
type Member struct {
	ID    string `json:"id" jsonschema:"member id, e.g. ENG-001: pass it to get_expenses as member_id"`
	Name  string `json:"name" jsonschema:"full name"`
	Level string `json:"level" enum:"L1,L2,L3,L4,L5" jsonschema:"employee level: pass it to get_budget_by_level"`
}

// Budget is the travel budget of a level.
type Budget struct {
	Level       string `json:"level" jsonschema:"the employee level asked about"`
	TravelLimit int    `json:"travel_limit" jsonschema:"travel budget for one quarter, in currency units"`
	Currency    string `json:"currency" jsonschema:"ISO 4217 currency code (always USD)"`
}

// Expense is one expense row.
type Expense struct {
	Date        string  `json:"date" jsonschema:"date of the expense, YYYY-MM-DD"`
	Category    string  `json:"category" enum:"travel,meals,software,equipment,training,office" jsonschema:"expense category"`
	Amount      float64 `json:"amount" jsonschema:"amount in USD, with cents"`
	Description string  `json:"description" jsonschema:"vendor, purpose, project and receipt number"`
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func pad3(n int) string {
	switch {
	case n < 10:
		return "00" + strconv.Itoa(n)
	case n < 100:
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// genTeam is genTeam of the reference.
func genTeam(department string) []Member {
	r := mulberry32(fnv1a("team|" + department))
	prefix := department
	if len(prefix) > 3 {
		prefix = prefix[:3]
	}
	prefix = strings.ToUpper(prefix) // ASCII only: same as toUpperCase
	out := make([]Member, 0, TeamSize)
	for i := range TeamSize {
		first := firstNames[r.pick(len(firstNames))]
		last := lastNames[r.pick(len(lastNames))]
		level := "L" + strconv.Itoa(1+r.pick(5))
		out = append(out, Member{ID: prefix + "-" + pad3(i+1), Name: first + " " + last, Level: level})
	}
	return out
}

// genBudget is genBudget of the reference: an unknown level has limit 0
// (the tool's enum rejects unknown levels before this runs).
func genBudget(level string) Budget {
	return Budget{Level: level, TravelLimit: travelLimits[level], Currency: budgetCurrency}
}

// quarterNumber is Number(quarter.slice(1)) || 1 for the quarters the tool
// accepts (Q1..Q4); anything else gives 1, as NaN and 0 do in the reference.
func quarterNumber(quarter string) int {
	if len(quarter) < 2 {
		return 1
	}
	q, err := strconv.Atoi(quarter[1:])
	if err != nil || q == 0 {
		return 1
	}
	return q
}

// genExpenses is genExpenses of the reference.
func genExpenses(memberID, quarter string) []Expense {
	r := mulberry32(fnv1a("exp|" + memberID + "|" + quarter))
	firstMonth := (quarterNumber(quarter)-1)*3 + 1
	out := make([]Expense, 0, RowsPerMember)
	for range RowsPerMember {
		month := firstMonth + r.pick(3)
		day := 1 + r.pick(28)
		category := categories[r.pick(len(categories))]
		var base float64
		if category == "travel" {
			base = 40 + float64(r.next()*560)
		} else {
			base = 5 + float64(r.next()*295)
		}
		amount := jsmath.Round2(base)
		vendor := vendors[r.pick(len(vendors))]
		purpose := purposes[r.pick(len(purposes))]
		project := projects[r.pick(len(projects))]
		receipt := 100000 + r.pick(900000)
		description := vendor + ": " + purpose + " for project " + project + ", receipt #" + strconv.Itoa(receipt)
		description += " - submitted via expense portal" // pad/truncate to exactly 80 characters
		if len(description) > 80 {
			description = description[:80]
		}
		out = append(out, Expense{Date: "2024-" + pad2(month) + "-" + pad2(day), Category: category, Amount: amount, Description: description})
	}
	return out
}

// OverBudget is one row of the workload's answer.
type OverBudget struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Level       string  `json:"level"`
	TravelTotal float64 `json:"travel_total"`
	TravelLimit int     `json:"travel_limit"`
	OverBy      float64 `json:"over_by"`
}

// Reference computes the workload's answer directly in Go, without a
// sandbox: the members of Department whose Quarter travel spending is over
// their level's limit, in team order.
func Reference() []OverBudget {
	team := genTeam(Department)
	over := []OverBudget{}
	for _, m := range team {
		travel := 0.0
		for _, e := range genExpenses(m.ID, Quarter) {
			if e.Category == "travel" {
				travel += e.Amount
			}
		}
		limit := genBudget(m.Level).TravelLimit
		if travel > float64(limit) {
			over = append(over, OverBudget{ID: m.ID, Name: m.Name, Level: m.Level,
				TravelTotal: jsmath.Round2(travel), TravelLimit: limit, OverBy: jsmath.Round2(travel - float64(limit))})
		}
	}
	return over
}
