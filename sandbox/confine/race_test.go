//go:build race

package confine

// The race detector maps terabytes of shadow memory, so RLIMIT_AS cannot
// be tested in a race-built process.
const raceEnabled = true
