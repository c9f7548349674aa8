package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/sandboxtest"
)

// TestProgressLine: the line is redrawn in place with the newest snapshot
// and erased at the end.
//
// It runs in a synctest bubble: the line's ticker runs on the bubble's
// clock, so one tick is drawn exactly when the test has slept one.
func TestProgressLine(t *testing.T) { synctest.Test(t, testProgressLine) }

func testProgressLine(t *testing.T) {
	var w sandboxtest.Buffer
	p := newProgressLine(&w, time.Millisecond)
	p.update(bindings.RunProgress{Seq: 2, Calls: sandbox.CallStats{Total: 3, OK: 2, Failed: 1}, InFlight: 4, Partials: 1})
	p.update(bindings.RunProgress{Seq: 1, Calls: sandbox.CallStats{Total: 1}}) // older: ignored
	time.Sleep(time.Millisecond)
	synctest.Wait() // the tick was drawn
	if !strings.Contains(w.String(), "3 calls done") {
		t.Fatalf("after a tick: %q, want the newest snapshot drawn", w.String())
	}
	p.stop()
	out := w.String()
	if !strings.HasPrefix(out, "\r\x1b[K") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("output %q: want each draw to start with \\r and erase, and the line erased at the end", out)
	}
	if !strings.Contains(out, "running… 3 calls done (2 ok, 1 failed), 4 in flight, ") || !strings.Contains(out, "progress saved") {
		t.Errorf("output %q", out)
	}
	if strings.Contains(out, "\n") {
		t.Errorf("output %q has a newline", out)
	}

	// A run shorter than a tick draws nothing.
	var quiet sandboxtest.Buffer
	newProgressLine(&quiet, time.Hour).stop()
	if quiet.String() != "" {
		t.Errorf("a quick run drew %q", quiet.String())
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer counted as a terminal")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		t.Setenv("TERM", "xterm")
		if !isTerminal(tty) {
			t.Error("/dev/tty is not a terminal")
		}
	}
}

// stuckWriter blocks every write until released, like a terminal stopped
// with ^S.
type stuckWriter struct {
	writing chan struct{} // receives once a write has started
	release chan struct{}
}

func (s *stuckWriter) Write(p []byte) (int, error) {
	select {
	case s.writing <- struct{}{}:
	default:
	}
	<-s.release
	return len(p), nil
}

// TestProgressUpdateNeverBlocks: update is called from the runner's
// goroutines (every tool call reports through it), so a terminal that does
// not take the line must not hold them up.
func TestProgressUpdateNeverBlocks(t *testing.T) {
	w := &stuckWriter{writing: make(chan struct{}, 1), release: make(chan struct{})}
	p := newProgressLine(w, time.Millisecond)
	<-w.writing // the loop is now stuck in a write
	done := make(chan struct{})
	go func() {
		p.update(bindings.RunProgress{Seq: 1})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a hang check, not a timing
		close(w.release)
		p.stop()
		t.Fatal("update blocked behind a stuck terminal write")
	}
	close(w.release)
	p.stop()
}
