// Package storetest starts a real redis-server for tests: on a free
// loopback port, without persistence, stopped when the test ends.
package storetest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Redis is a redis-server started by a test.
type Redis struct {
	URL  string
	Port int
	t    testing.TB
	cmd  *exec.Cmd
}

// StartRedis starts redis-server on a free loopback port and returns it; it
// is killed when the test ends. The test is skipped when redis-server is
// not installed (.ci/run installs it).
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("skipped: redis-server is not installed (apt-get install redis-server; .ci/run does)")
	}
	// A free port is found by listening and closing; another process may
	// take it before redis-server binds it, so a start that fails is
	// tried again on another port.
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		r := &Redis{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), Port: port, t: t}
		if err := r.start(); err != nil {
			if attempt < 4 {
				continue
			}
			t.Fatal(err)
		}
		t.Cleanup(r.Stop)
		return r
	}
}

// Start (re)starts the server on its port and waits until it accepts
// connections.
func (r *Redis) Start() {
	r.t.Helper()
	if err := r.start(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *Redis) start() error {
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "notice", "--protected-mode", "yes")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "Ready to accept connections") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			_ = cmd.Wait()
			return fmt.Errorf("redis-server on port %d exited before accepting connections", r.Port)
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("redis-server on port %d did not become ready", r.Port)
	}
	r.cmd = cmd
	return nil
}

// Stop kills the server (its data is lost: no persistence).
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}
