package expense_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
)

// TestReadmeFigures: the README's "Standard workloads" table states this
// package's checksums, the result's size and the number of calls; they must
// be the ones the tests check.
func TestReadmeFigures(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Standard workloads")
	if !ok {
		t.Fatal("README.md has no \"Standard workloads\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	size := len(expense.ReferenceSummary())
	for _, want := range []string{
		expense.TeamSHA256, expense.ExpensesSHA256, expense.SummarySHA256,
		fmtThousands(size) + " bytes after " + strconv.Itoa(expense.DirectCalls) + " calls",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("README's Standard workloads section does not state %q", want)
		}
	}
}

// fmtThousands writes n with comma separators, as the README does.
func fmtThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
