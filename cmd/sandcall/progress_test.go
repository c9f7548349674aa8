package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/sandbox"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressLine: the line is redrawn in place with the newest snapshot
// and erased at the end.
func TestProgressLine(t *testing.T) {
	var w lockedBuffer
	p := newProgressLine(&w, time.Millisecond)
	p.update(bindings.RunProgress{Seq: 2, Calls: sandbox.CallStats{Total: 3, OK: 2, Failed: 1}, InFlight: 4, Partials: 1})
	p.update(bindings.RunProgress{Seq: 1, Calls: sandbox.CallStats{Total: 1}}) // older: ignored
	for !strings.Contains(w.String(), "3 calls done") {
		time.Sleep(time.Millisecond)
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
	var quiet lockedBuffer
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
