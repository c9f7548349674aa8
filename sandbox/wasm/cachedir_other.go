//go:build !unix

package wasm

import "errors"

// checkCacheDir refuses every directory where ownership cannot be checked.
func checkCacheDir(string) (string, error) {
	return "", errors.New("wasm: an on-disk compilation cache is supported on Unix only")
}
