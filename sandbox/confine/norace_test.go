//go:build !race

package confine

const raceEnabled = false
