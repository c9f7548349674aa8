package mcpserver_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

// TestHTTPCancelledNotAnswered: in a 2025-11-25 session, a
// notifications/cancelled for an in-flight run_code stops the run, and no
// response for that id comes on the request's stream (MCP: the receiver
// should not respond to a cancelled request).
func TestHTTPCancelledNotAnswered(t *testing.T) {
	started := make(chan struct{}, 1)
	ts, audit := newHTTP(t, options{extra: []*tools.Tool{blocker(started)}})
	url := ts.URL + "/mcp"
	sid := rawInitialize(t, url)

	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"code":"await tools.block({})"}}}`
	type streamEnd struct {
		data []string
		err  error
	}
	done := make(chan streamEnd, 1)
	go func() {
		resp, err := http.DefaultClient.Do(rawRequest(t, context.Background(), url, body, sid))
		if err != nil {
			done <- streamEnd{err: err}
			return
		}
		defer resp.Body.Close()
		var data []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				data = append(data, d)
			}
		}
		done <- streamEnd{data, sc.Err()}
	}()
	<-started
	resp, err := http.DefaultClient.Do(rawRequest(t, context.Background(), url,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`, sid))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rec := audit.waitRun(t); rec["code"] != string(sandbox.ECancelled) {
		t.Fatalf("run ended with %v, want E_CANCELLED", rec["code"])
	}
	end := <-done // the request's stream ends once the handler is over
	for _, d := range end.data {
		if strings.Contains(d, `"id":7`) {
			t.Errorf("the cancelled request was answered: %s", d)
		}
	}
	// The session still serves.
	resp, err = http.DefaultClient.Do(rawRequest(t, context.Background(), url,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ping","arguments":{"n":1}}}`, sid))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	answered := false
	for sc.Scan() {
		answered = answered || strings.Contains(sc.Text(), `"id":8`)
	}
	if !answered {
		t.Error("no answer to a request after the cancelled one")
	}
}
