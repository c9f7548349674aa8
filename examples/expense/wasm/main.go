//go:build wasip1

package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/sandcall/sandcall/bindings/wasmguest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err) // captured into the run's logs
		os.Exit(1)                   // E_GUEST_ERROR
	}
}

func run() error {
	var team []member
	if err := wasmguest.Call("get_team_members", map[string]string{"department": "engineering"}, &team); err != nil {
		return err
	}

	levels := distinctLevels(team)
	levelArgs := make([]map[string]string, len(levels))
	for i, l := range levels {
		levelArgs[i] = map[string]string{"level": l}
	}
	budgets, err := wasmguest.Map[budget]("get_budget_by_level", levelArgs)
	if err != nil {
		return err
	}
	limits := make(map[string]float64, len(levels))
	for i, l := range levels {
		limits[l] = budgets[i].TravelLimit
	}

	expenseArgs := make([]map[string]string, len(team))
	for i, m := range team {
		expenseArgs[i] = map[string]string{"member_id": m.ID, "quarter": "Q3"}
	}
	raws, err := wasmguest.Map[json.RawMessage]("get_expenses", expenseArgs)
	if err != nil {
		return err
	}
	expenses := make([][]expenseRow, len(raws))
	for i, raw := range raws {
		if expenses[i], err = expenseRows(raw); err != nil {
			return err
		}
	}

	return wasmguest.Return(summarize(team, limits, expenses))
}
