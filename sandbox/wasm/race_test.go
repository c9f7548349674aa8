//go:build race

package wasm

// raceEnabled: the race detector slows wazero's compiler about tenfold.
const raceEnabled = true
