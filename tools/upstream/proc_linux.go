package upstream

import (
	"os/exec"
	"syscall"
)

// childAttr puts a stdio server in a process group of its own (so that
// stopping it stops what it started: npx's node, a shell's children) and
// asks the kernel to kill it when sandcall dies, however it dies
// (PR_SET_PDEATHSIG; a SIGKILL of sandcall included). The parent-death
// signal reaches the server itself; its own children are reached through
// the group when sandcall stops it (killGroup), or by their stdin's EOF
// when sandcall is killed outright.
func childAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group led by pid (see childAttr).
// A group already gone is not an error.
func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}
