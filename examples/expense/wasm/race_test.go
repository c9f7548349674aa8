//go:build race

package main

// raceEnabled: the race detector slows the interpreter about tenfold.
const raceEnabled = true
