package process

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// residentKiB sums the resident memory of this process's mappings that
// overlap ranges, from /proc/self/smaps.
func residentKiB(t *testing.T, ranges [][2]uintptr) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	total, in := 0, false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && !strings.HasSuffix(f[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			z, err2 := strconv.ParseUint(hi, 16, 64)
			in = false
			for _, r := range ranges {
				if err1 == nil && err2 == nil && uintptr(a) < r[1] && uintptr(z) > r[0] {
					in = true
				}
			}
			continue
		}
		if in && f[0] == "Rss:" && len(f) > 1 {
			kb, _ := strconv.Atoi(f[1])
			total += kb
		}
	}
	return total
}

// TestReleaseMemoryDropsCodePages: the read-only segments of the test
// binary are found from its program headers, and releasing memory takes
// their pages off the page table while the process goes on running (the
// code it runs next maps again, a fault at a time: reading smaps to measure
// maps some of them back).
func TestReleaseMemoryDropsCodePages(t *testing.T) {
	rs := codeRanges()
	if len(rs) == 0 {
		t.Fatal("no read-only segment of the executable found")
	}
	before := residentKiB(t, rs)
	ReleaseMemory()
	after := residentKiB(t, rs)
	t.Logf("%d ranges: resident %d -> %d KiB", len(rs), before, after)
	if after > before*3/4 {
		t.Errorf("resident %d -> %d KiB: want at most three quarters left", before, after)
	}
}
