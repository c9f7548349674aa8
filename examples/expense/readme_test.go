package expense_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
)

// TestReadmeFigures: the README's figure (what one run_code call saves on
// this workload) and the "Standard workloads" table of docs/workloads.md
// (this package's checksums, the result's size and the number of calls)
// state the figures the tests check.
func TestReadmeFigures(t *testing.T) {
	program := len(expense.Program)
	size := len(expense.ReferenceSummary())
	total := program + size
	for _, c := range []struct {
		file, section string
		want          []string
	}{
		{"../../README.md", "# sandcall", []string{
			fmtThousands(expense.DirectBytes) + " compact JSON (" + fmtThousands(expense.DirectPrettyBytes) + " pretty-printed)",
			strconv.Itoa(expense.DirectCalls) + " raw results",
			fmtThousands(program) + " + " + fmtThousands(size) + " = " + fmtThousands(total) +
				" (" + strconv.Itoa(expense.DirectBytes/total) + "× less)",
		}},
		{"../../docs/workloads.md", "## Standard workloads", []string{
			expense.TeamSHA256, expense.ExpensesSHA256, expense.SummarySHA256,
			fmtThousands(size) + " bytes after " + strconv.Itoa(expense.DirectCalls) + " calls",
		}},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		_, sec, ok := strings.Cut(string(b), c.section+"\n")
		if !ok {
			t.Fatalf("%s has no %q section", c.file, c.section)
		}
		sec, _, _ = strings.Cut(sec, "\n## ")
		for _, want := range c.want {
			if !strings.Contains(sec, want) {
				t.Errorf("%s, section %q, does not state %q", c.file, c.section, want)
			}
		}
	}
}

// fmtThousands writes n with comma separators, as the docs do.
func fmtThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
