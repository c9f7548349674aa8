package upstream

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// closeGrace is how long a stdio server has to exit after its stdin is
// closed (the shutdown MCP asks for) before its process group gets
// SIGTERM, and again after SIGTERM before SIGKILL. Servers exit at once on
// EOF; one that does not costs at most twice this, not the SDK's 5s+5s.
const closeGrace = 500 * time.Millisecond

// procTransport is the SDK's command transport that remembers the server's
// process id once started, so that a dial given up can kill the server
// (and its process group) even while the SDK waits on its handshake.
type procTransport struct {
	mcp.CommandTransport

	mu     sync.Mutex
	pid    int
	doomed bool // kill was called: kill the server as soon as it starts
}

func (t *procTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// The SDK's command transport, with the server's stdout read through
	// frameFilter (frames.go): an answer over the frame cap is dropped,
	// and answered with an error, without losing the connection.
	cmd := t.Command
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	grace := t.TerminateDuration
	if grace <= 0 {
		grace = 5 * time.Second
	}
	conn, err := (&mcp.IOTransport{Reader: byteReadCloser{newFrameFilter(stdout, MaxResponseBytes)},
		Writer: &stdinCloser{WriteCloser: stdin, cmd: cmd, grace: grace}, MaxLineLength: frameBytes}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.pid = t.Command.Process.Pid
	doomed := t.doomed
	t.mu.Unlock()
	if doomed {
		signalGroup(t.pid, syscall.SIGKILL)
	}
	return conn, nil
}

// kill kills the server's process group now, or as soon as it starts.
func (t *procTransport) kill() {
	t.mu.Lock()
	t.doomed = true
	pid := t.pid
	t.mu.Unlock()
	if pid > 0 {
		signalGroup(pid, syscall.SIGKILL)
	}
}

// stopServer ends the session of a stdio server whose process (group
// leader, see childAttr) is pid: stdin is closed, then the group gets
// SIGTERM after closeGrace and SIGKILL after another; whatever the server
// left running in its group is killed last.
func stopServer(sess *mcp.ClientSession, pid int) error {
	done := make(chan error, 1)
	go func() { done <- sess.Close() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(closeGrace):
		signalGroup(pid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(closeGrace):
			signalGroup(pid, syscall.SIGKILL)
			err = <-done
		}
	}
	signalGroup(pid, syscall.SIGKILL)
	return err
}
