package expense_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/tools"
)

// The toolset, and one call as a program would make it.
func ExampleTools() {
	c, err := tools.NewCatalog(expense.Tools()...)
	if err != nil {
		panic(err)
	}
	for _, t := range c.List() {
		fmt.Println(t.Name)
	}
	budget, _ := c.Lookup("get_budget_by_level")
	res, err := budget.Call(context.Background(), json.RawMessage(`{"level":"L4"}`))
	fmt.Println(string(res), err)
	_, err = budget.Call(context.Background(), json.RawMessage(`{"level":"L6"}`))
	fmt.Println(err)
	// Output:
	// get_budget_by_level
	// get_expenses
	// get_team_members
	// {"level":"L4","travel_limit":6500,"currency":"USD"} <nil>
	// E_TOOL_ARGS: argument "level": "L6" is not one of the allowed values
}

// The workload's answer, computed in Go: the bytes Program must return.
func ExampleReferenceSummary() {
	s := expense.ReferenceSummary()
	var rows []expense.OverBudget
	_ = json.Unmarshal(s, &rows)
	fmt.Println(len(s), "bytes,", len(rows), "rows")
	fmt.Printf("%x\n", sha256.Sum256(s))
	fmt.Printf("%+v\n", rows[0])
	// Output:
	// 1791 bytes, 16 rows
	// ced1ffb502f5a3b35468831e1b0cdef8f4aa4595953c23304d30e28b5555c250
	// {ID:ENG-001 Name:Frances Liskov Level:L1 TravelTotal:4801.26 TravelLimit:2500 OverBy:2301.26}
}

// What a model would read doing the workload one tool call per turn,
// against the program's 1,791-byte result.
func ExampleMeasureDirect() {
	d, err := expense.MeasureDirect(context.Background(), expense.Tools())
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d calls, %d bytes compact, %d pretty; program result %d bytes (%.0fx less)\n",
		d.Calls, d.Bytes, d.PrettyBytes, expense.SummaryBytes, float64(d.Bytes)/expense.SummaryBytes)
	// Output:
	// 56 calls, 313263 bytes compact, 374579 pretty; program result 1791 bytes (175x less)
}
