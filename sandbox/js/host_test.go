package js

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// newHost returns the scriptable fake broker of sandbox/sandboxtest: its
// standard tools (ping, echo, nap, slow, fail, deny) and the expense
// workload's, serving canned JSON of the same shapes and sizes,
// pre-encoded. The limits of a real broker are not modelled.
func newHost() *sandboxtest.Host { return sandboxtest.New(expenseFuncs) }

var expenseTools = []string{"get_team_members", "get_budget_by_level", "get_expenses"}
var testTools = append([]string{"ping", "echo", "slow", "fail", "deny"}, expenseTools...)

var (
	teamJSON     []byte
	budgetJSON   = map[string][]byte{}
	expensesJSON = map[string][]byte{}
	dataOnce     sync.Once
)

// expenseData builds the canned data once: 50 members over levels L1..L5,
// and 40 expense rows per member, about 313 KB over the 56 calls of the
// expense workload.
func expenseData() {
	dataOnce.Do(func() {
		var team []map[string]any
		first := []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Dennis", "Frances", "John", "Margaret"}
		last := []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Thompson", "Ritchie", "Allen", "Backus", "Hamilton"}
		for i := 0; i < 50; i++ {
			team = append(team, map[string]any{"id": fmt.Sprintf("ENG-%03d", i+1),
				"name": first[i%10] + " " + last[(i/10+i)%10], "level": fmt.Sprintf("L%d", i%5+1)})
		}
		teamJSON = mustJSON(team)
		for l := 1; l <= 5; l++ {
			lv := fmt.Sprintf("L%d", l)
			budgetJSON[lv] = []byte(fmt.Sprintf(`{"level":%q,"travel_limit":%d,"currency":"USD"}`, lv, 2000+l*1000))
		}
		cats := []string{"travel", "meals", "software", "hardware", "training"}
		descs := []string{"Flight to the customer site and back", "Team dinner after the quarterly planning", "Annual license renewal for the editor", "Replacement laptop charger and adapter", "Conference ticket for the distributed systems summit"}
		for i := 0; i < 50; i++ {
			id := fmt.Sprintf("ENG-%03d", i+1)
			var b strings.Builder
			b.WriteByte('[')
			for j := 0; j < 40; j++ {
				if j > 0 {
					b.WriteByte(',')
				}
				amt := float64((i*7919+j*104729)%90000)/100 + 10
				fmt.Fprintf(&b, `{"date":"2025-%02d-%02d","category":%q,"amount":%s,"description":%q}`,
					7+j%3, 1+j%28, cats[(i+j)%5], strconv.FormatFloat(amt, 'f', -1, 64), descs[(i*3+j)%5])
			}
			b.WriteByte(']')
			expensesJSON[id] = []byte(b.String())
		}
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

var expenseFuncs = map[string]sandboxtest.Func{
	"get_team_members": func(context.Context, json.RawMessage) (json.RawMessage, error) {
		expenseData()
		return teamJSON, nil
	},
	"get_budget_by_level": func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		expenseData()
		var a struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(args, &a)
		if b, ok := budgetJSON[a.Level]; ok {
			return b, nil
		}
		return nil, &sandbox.Error{Code: sandbox.EToolArgs, Path: "/level",
			Message:       fmt.Sprintf("level %q is not one of the allowed values", a.Level),
			Hint:          "Use one of L1, L2, L3, L4, L5.",
			AllowedValues: []any{"L1", "L2", "L3", "L4", "L5"}}
	},
	"get_expenses": func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		expenseData()
		var a struct {
			MemberID string `json:"member_id"`
			Quarter  string `json:"quarter"`
		}
		_ = json.Unmarshal(args, &a)
		if b, ok := expensesJSON[a.MemberID]; ok {
			return b, nil
		}
		return []byte("[]"), nil
	},
}
