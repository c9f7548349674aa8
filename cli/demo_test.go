package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/examples/market"
)

func TestDemo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"demo"}, {"demo", "expense"}} {
		stdout, stderr, code := sandcall(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		rows := regexp.MustCompile(`(?m)^\s*ENG-\d{3}\s`).FindAllString(stdout, -1)
		if len(rows) != 16 {
			t.Fatalf("%d rows, want 16:\n%s", len(rows), stdout)
		}
		// Measured by the run itself; these are the workload's published numbers.
		for _, want := range []string{"56 raw tool results", "313,263 bytes", "374,579 pretty-printed", "1,791", "175× counting the result alone"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("demo output lacks %q:\n%s", want, stdout)
			}
		}
		prog := fmt.Sprintf("(%s + 1,791)", comma(int64(len(expense.Program))))
		if !strings.Contains(stdout, prog) {
			t.Errorf("demo output lacks the program size %s:\n%s", prog, stdout)
		}
	}
	_, stderr, code := sandcall(t, "", "demo", "bogus")
	if code != 2 || !strings.Contains(stderr, "want expense, market, inbox or programs") {
		t.Fatalf("demo bogus: exit %d, %q", code, stderr)
	}
}

// `sandcall demo market`: the report's rows, movers and unavailable ticker
// as computed in Go from the dataset, and the context accounting measured by
// the run against a one-call-per-turn agent's.
func TestDemoMarket(t *testing.T) {
	t.Parallel()
	list := market.Watchlist()
	ref := market.Reference(list)
	direct, err := market.MeasureDirect(context.Background(), market.Tools(market.Options{}), list)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"demo", "market"}, {"demo", "--isolation", "inprocess", "market"}} {
		stdout, stderr, code := sandcall(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, r := range ref.Rows {
			row := fmt.Sprintf(`(?m)^\s*%s\s+%s\s+%s\s+%.1f\s+%.1f\s+%s$`, regexp.QuoteMeta(r.Ticker), regexp.QuoteMeta(money(r.Price)),
				regexp.QuoteMeta(fmt.Sprintf("%+.2f", r.ChgPct)), *r.RetPct, *r.VolPct, regexp.QuoteMeta(*r.Headline))
			if !regexp.MustCompile(row).MatchString(stdout) {
				t.Errorf("%v: no row %s:\n%s", args, row, stdout)
			}
		}
		for _, m := range ref.Movers {
			if want := fmt.Sprintf("%+6.2f%%  peers: %s", m.ChgPct, strings.Join(m.Peers, ", ")); !strings.Contains(stdout, want) {
				t.Errorf("%v: no mover %s %q", args, m.Ticker, want)
			}
		}
		for _, want := range []string{"Unavailable:\n  ACME   E_TOOL_FAILED: no current price for ACME", "The program made 63 tool calls",
			fmt.Sprintf("%d raw tool results", direct.Calls),
			fmt.Sprintf("a one-call-per-turn agent would have read %s bytes of raw results; this program returned %s bytes",
				comma(int64(direct.Bytes)), comma(int64(len(market.ReferenceJSON(list)))))} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, stdout)
			}
		}
		// The demo's flaky tool failed and the broker retried: the retry path ran.
		if m := regexp.MustCompile(`Transient tool failures: (\d+) .* the broker retried (\d+);`).FindStringSubmatch(stdout); m == nil || m[1] == "0" || m[2] == "0" {
			t.Errorf("%v: no transient failure retried: %q", args, m)
		}
	}
}
