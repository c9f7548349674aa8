package main

import "github.com/sandcall/sandcall/examples/internal/jsmath"

// The workload's types, as the tools return them (examples/expense), and
// the row of the answer with the key order program.js builds.
type (
	member struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Level string `json:"level"`
	}
	budget struct {
		Level       string  `json:"level"`
		TravelLimit float64 `json:"travel_limit"`
		Currency    string  `json:"currency"`
	}
	expenseRow struct {
		Category string  `json:"category"`
		Amount   float64 `json:"amount"`
	}
	overBudget struct {
		ID          string  `json:"id"`
		Name        string  `json:"name"`
		Level       string  `json:"level"`
		TravelTotal float64 `json:"travel_total"`
		TravelLimit float64 `json:"travel_limit"`
		OverBy      float64 `json:"over_by"`
	}
)

// distinctLevels is [...new Set(team.map((m) => m.level))]: the levels in
// order of first appearance.
func distinctLevels(team []member) []string {
	var levels []string
	seen := map[string]bool{}
	for _, m := range team {
		if !seen[m.Level] {
			seen[m.Level] = true
			levels = append(levels, m.Level)
		}
	}
	return levels
}

// summarize is the arithmetic of program.js, in the same IEEE-754
// operations in the same order, so that its JSON is the reference's byte
// for byte: expenses[i] are team[i]'s rows, limits the travel limit of each
// level. It is a copy of the reference's (examples/expense: Reference)
// rather than an import, which would link the tools and their
// dependencies into the guest; the rounding is shared (jsmath), which
// imports only the standard library.
func summarize(team []member, limits map[string]float64, expenses [][]expenseRow) []overBudget {
	over := []overBudget{} // [] rather than null when nobody is over
	for i, m := range team {
		travel := 0.0
		for _, e := range expenses[i] {
			if e.Category == "travel" {
				travel += e.Amount
			}
		}
		limit := limits[m.Level]
		if travel > limit {
			over = append(over, overBudget{ID: m.ID, Name: m.Name, Level: m.Level,
				TravelTotal: jsmath.Round2(travel), TravelLimit: limit, OverBy: jsmath.Round2(travel - limit)})
		}
	}
	return over
}
