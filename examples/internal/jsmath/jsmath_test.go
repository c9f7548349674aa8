package jsmath

import (
	"fmt"
	"math"
	"testing"
)

func TestRound(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, tt := range []struct{ in, want float64 }{
		{0, 0}, {0.4, 0}, {0.5, 1}, {1.5, 2}, {2.5, 3}, {-0.5, negZero}, {-0.4, negZero}, {-0.6, -1},
		{-1.5, -1}, {-2.5, -2}, {-2.6, -3}, {0.49999999999999994, 0}, {-0.49999999999999994, negZero},
		{4503599627370495.5, 4503599627370496}, {4503599627370497, 4503599627370497}, {-4503599627370495.5, -4503599627370495},
		{1e300, 1e300}, {math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(-1)}, {negZero, negZero},
		{480126.49999999994, 480126}, {480126.00000000006, 480126}, {123.45 * 100, 12345},
	} {
		got := Round(tt.in)
		if got != tt.want || math.Signbit(got) != math.Signbit(tt.want) {
			t.Errorf("Round(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if !math.IsNaN(Round(math.NaN())) {
		t.Error("Round(NaN) is not NaN")
	}
}

func ExampleRound2() {
	fmt.Println(Round2(1.005), Round2(2.675), Round2(-1.005))
	// Output: 1 2.68 -1
}
