//go:build race

package js

// raceEnabled is true under the race detector, which slows goja ~10×:
// tests give runs that are not meant to time out more time.
const raceEnabled = true
