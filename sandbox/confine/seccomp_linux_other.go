//go:build linux && !amd64 && !arm64

package confine

// No filter is written for this architecture: the seccomp layer reports
// itself unavailable.
const (
	seccompArch = 0
	x32Bit      = 0
)

var archDenied []uintptr
