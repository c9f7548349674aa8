package process

import (
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// workerTimerSlack is the timer slack of a worker's threads: how late the
// kernel may wake a thread from a timed sleep so as to batch the wake-ups.
// The default, 50 us, lets the Go runtime's monitor thread (sysmon) wake
// every 20-70 us while a job runs and after every wake-up of an idle
// worker; on a 2-core VM those wake-ups, each a context switch on a core
// that the job or the server needs, cost a tenth of the worker's and the
// server's CPU per expense run. At 1 ms sysmon still preempts a looping
// guest within its 10 ms time slice, and the worker's timers (the job's
// deadline, the memory watchdog's 5 ms tick) fire at most 1 ms late; frames
// wake a worker as before, since an event is not a timer.
const workerTimerSlack = time.Millisecond

// Linux prctl(2) options.
const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// startCmd starts cmd from a thread whose timer slack is workerTimerSlack:
// a child inherits its parent thread's slack, across execve, and passes it
// on to every thread it creates. The server's thread gets its own slack
// back before it runs anything else. If the slack cannot be set, the
// worker starts with the server's.
func startCmd(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	old, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno == 0 {
		_, _, errno = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, uintptr(workerTimerSlack.Nanoseconds()), 0)
	}
	if errno != 0 {
		runtime.UnlockOSThread()
		return cmd.Start()
	}
	err := cmd.Start()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0); errno != 0 {
		// The thread keeps the worker's slack: it stays locked to this
		// goroutine (the pool's filler), so that no other runs on it.
		return err
	}
	runtime.UnlockOSThread()
	return err
}
