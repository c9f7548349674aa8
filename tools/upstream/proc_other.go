//go:build !linux

package upstream

import (
	"os"
	"os/exec"
	"syscall"
)

// childAttr does nothing here: process groups and the parent-death signal
// are used on Linux only (see proc_linux.go).
func childAttr(cmd *exec.Cmd) {}

// signalGroup signals the server process itself.
func signalGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		_ = p.Signal(sig)
	}
}
