package process

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threadSlacks returns the timer slack of each thread of pid (the file is
// /proc/TID/timerslack_ns: task directories do not list it).
func threadSlacks(t *testing.T, pid int) map[string]int64 {
	t.Helper()
	dirs, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	out := map[string]int64{}
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + filepath.Base(d) + "/timerslack_ns")
		if errors.Is(err, fs.ErrPermission) {
			t.Skipf("timer slack not readable here: %v", err)
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread has exited
		}
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(d)] = v
	}
	return out
}

// TestWorkerTimerSlack: every thread of a worker runs with the worker's
// timer slack, and the server's threads keep their own.
func TestWorkerTimerSlack(t *testing.T) {
	had := map[int64]bool{}
	for _, v := range threadSlacks(t, os.Getpid()) {
		had[v] = true
	}
	pids := make(chan int, 4)
	p := newPool(t, Config{Size: 1, Reuse: 2, OnStart: func(pid int) error { pids <- pid; return nil }})
	// A job with calls: the worker's runtime has started its threads,
	// and it stays (Reuse 2) for the reading.
	if o := p.Execute(context.Background(), job("calls 50", 10*time.Second), &pingHost{}); o.Err != nil {
		t.Fatal(o.Err)
	}
	pid := <-pids
	slacks := threadSlacks(t, pid)
	if len(slacks) < 2 {
		t.Fatalf("worker has %d threads, want the runtime's several", len(slacks))
	}
	for tid, v := range slacks {
		if v != workerTimerSlack.Nanoseconds() {
			t.Errorf("worker thread %s: timer slack %d ns, want %d", tid, v, workerTimerSlack.Nanoseconds())
		}
	}
	for tid, v := range threadSlacks(t, os.Getpid()) {
		if !had[v] {
			t.Errorf("server thread %s: timer slack %d ns, none had it before", tid, v)
		}
	}
}
