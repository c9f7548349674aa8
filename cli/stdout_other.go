//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cli

import "os"

// takeStdout returns stdout for the protocol and points os.Stdout at stderr
// (on this platform file descriptors are not redirected).
func takeStdout() (*os.File, error) {
	out := os.Stdout
	os.Stdout = os.Stderr
	return out, nil
}
