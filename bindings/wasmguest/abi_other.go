//go:build !wasip1

package wasmguest

// abi is nil outside wasip1: there is no host module, and every function
// returns ErrNotGuest.
var abi host
