package js

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sandcall/sandcall/sandbox"
)

// testHost serves canned JSON shaped like the expense workload (same
// shapes and sizes, pre-encoded), plus a few tools for tests:
//
//	ping({n})             → n+1
//	echo(args)            → args
//	slow()                → blocks until cancelled
//	fail()                → E_TOOL_FAILED (retryable)
//	deny()                → E_TOOL_DENIED with a rule
//
// Unknown names get E_TOOL_UNKNOWN. The limits of a real broker are not
// modelled, except the in-flight high-water mark, which is recorded.
type testHost struct {
	calls    atomic.Int64
	inflight atomic.Int64
	maxIn    atomic.Int64
}

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

func (h *testHost) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	h.calls.Add(1)
	n := h.inflight.Add(1)
	defer h.inflight.Add(-1)
	for {
		m := h.maxIn.Load()
		if n <= m || h.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	switch tool {
	case "ping":
		var a struct{ N int64 }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, &sandbox.Error{Code: sandbox.EToolArgs, Message: "n must be a number", Path: "/n"}
		}
		return strconv.AppendInt(nil, a.N+1, 10), nil
	case "echo":
		return args, nil
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	case "fail":
		return nil, &sandbox.Error{Code: sandbox.EToolFailed, Message: "upstream unavailable", Hint: "Try again later.", Retryable: true}
	case "deny":
		return nil, &sandbox.Error{Code: sandbox.EToolDenied, Message: "denied by policy", Rule: "no-deny", Hint: "Ask a person."}
	case "get_team_members":
		expenseData()
		return teamJSON, nil
	case "get_budget_by_level":
		expenseData()
		var a struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(args, &a)
		if b, ok := budgetJSON[a.Level]; ok {
			return b, nil
		}
		return nil, &sandbox.Error{Code: sandbox.EToolArgs, Tool: tool, Path: "/level",
			Message:       fmt.Sprintf("level %q is not one of the allowed values", a.Level),
			Hint:          "Use one of L1, L2, L3, L4, L5.",
			AllowedValues: []any{"L1", "L2", "L3", "L4", "L5"}}
	case "get_expenses":
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
	}
	return nil, &sandbox.Error{Code: sandbox.EToolUnknown, Tool: tool,
		Message: fmt.Sprintf("no tool named %q", tool), Hint: "Use search_tools to find tools."}
}
