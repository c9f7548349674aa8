package cli

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/cli/config"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// lineHook is a writer that calls f with each line written, as it is
// written.
type lineHook struct {
	mu  sync.Mutex
	buf strings.Builder
	f   func(line string)
}

func (h *lineHook) Write(p []byte) (int, error) {
	h.mu.Lock()
	h.buf.Write(p)
	var lines []string
	for {
		s := h.buf.String()
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, s[:i])
		h.buf.Reset()
		h.buf.WriteString(s[i+1:])
	}
	h.mu.Unlock()
	for _, l := range lines {
		h.f(l)
	}
	return len(p), nil
}

// TestDrainUnreadyBeforeAnnounced: when serve over HTTP stops, /readyz
// already answers 503 at the moment "draining:" is printed (the line is
// read, and /readyz asked, from inside the write that prints it), so
// nothing that waits for the line can see the replica ready.
func TestDrainUnreadyBeforeAnnounced(t *testing.T) {
	t.Parallel()
	cat, err := tools.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: b, Executor: js.New(js.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listening := regexp.MustCompile(`listening on (http://\S+)/mcp`)
	var base string
	ready := -1
	hook := &lineHook{f: func(line string) {
		if m := listening.FindStringSubmatch(line); m != nil {
			base = m[1]
			cancel() // stop at once: the drain begins
		}
		if strings.HasPrefix(line, "draining:") {
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				t.Errorf("GET /readyz while draining: %v", err)
				return
			}
			resp.Body.Close()
			ready = resp.StatusCode
		}
	}}
	lim := &config.HTTP{MaxConnections: 8}
	e := &env{stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: hook}
	if code := serveHTTP(ctx, e, "serve", srv, "127.0.0.1:0", false, 0, lim, 0, discardLog{}); code != exitOK {
		t.Fatalf("serveHTTP: exit %d", code)
	}
	if ready != http.StatusServiceUnavailable {
		t.Errorf("GET /readyz when \"draining:\" was printed: %d, want 503", ready)
	}
}

type discardLog struct{}

func (discardLog) Warn(string, ...any) {}
