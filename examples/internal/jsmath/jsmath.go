// Package jsmath is the arithmetic of JavaScript the demos' Go references
// share with their programs, so that a Go result is the program's byte for
// byte. It imports only the standard library: the WebAssembly guest of the
// expense demo links it without linking the tools.
package jsmath

import "math"

// Round is ECMAScript Math.round: the integral value closest to x, ties
// toward +Infinity (so -2.5 rounds to -2, and 0.49999999999999994 to 0,
// where floor(x+0.5) would give 1), -0 for x in [-0.5, -0], and NaN and
// infinities unchanged.
func Round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	t := math.Trunc(x)
	d := x - t // exact: |d| < 1 and t shares x's sign and exponent range
	switch {
	case x >= 0 && d >= 0.5:
		t++
	case x < 0 && d < -0.5:
		t--
	}
	if t == 0 && (x < 0 || math.Signbit(x)) {
		return math.Copysign(0, -1)
	}
	return t
}

// Round2 is Math.round(x * 100) / 100.
func Round2(x float64) float64 {
	return Round(float64(x*100)) / 100
}
