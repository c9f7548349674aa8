package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/bindings/mcpserver"
	"github.com/sandcall/sandcall/bindings/mcpserver/bearer"
	"github.com/sandcall/sandcall/examples/demo"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/tools"
)

// longResult is run_code's structured content with the long-run fields.
type longResult struct {
	runResult
	Partial          json.RawMessage `json:"partial"`
	OutputRef        string          `json:"output_ref"`
	OutputBytes      int             `json:"output_bytes"`
	OutputNextOffset int             `json:"output_next_offset"`
}

// waitWire waits for a tool result on the wire that contains want (the
// client drops the answer to a request it cancelled, but the server still
// sends it).
func (w *wireLog) waitWire(t *testing.T, want string) json.RawMessage {
	t.Helper()
	timeout := time.After(time.Minute) // a hang guard
	for {
		w.mu.Lock()
		for _, r := range w.results {
			if bytes.Contains(r, []byte(want)) {
				w.mu.Unlock()
				return r
			}
		}
		added := w.added()
		w.mu.Unlock()
		select {
		case <-added: // look again
		case <-timeout:
			t.Fatalf("no result with %s on the wire", want)
			return nil
		}
	}
}

// TestCancelReturnsWhatIsKnown: a run cancelled by the client ends with
// E_CANCELLED and still reports the calls made, the logs and the saved
// progress (the answer goes on the wire; the cancelling client ignores it,
// the audit log and a client that did not cancel see it).
func TestCancelReturnsWhatIsKnown(t *testing.T) {
	started := make(chan struct{}, 1)
	h := newHarness(t, options{extra: []*tools.Tool{blocker(started)}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `
			console.log("start");
			const n = await tools.ping({n: 1});
			progress({pinged: n});
			console.log("pinged", n);
			await tools.block({});
			return "not cancelled"`}})
		errc <- err
	}()
	<-started
	t0 := time.Now()
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("CallTool returned no error after cancellation")
	}
	raw := h.wire.waitWire(t, string(sandbox.ECancelled))
	latency := time.Since(t0)
	var res struct {
		StructuredContent longResult `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	r := res.StructuredContent
	if r.OK || r.Error == nil || r.Error.Code != sandbox.ECancelled {
		t.Fatalf("result %s, want E_CANCELLED", raw)
	}
	if r.Calls.Total != 2 || r.Calls.OK != 1 || r.Calls.ByTool["ping"] != 1 || r.Calls.ByTool["block"] != 1 {
		t.Errorf("calls = %+v, want the ping (ok) and the cancelled block", r.Calls)
	}
	if strings.Join(r.Logs, "|") != "start|pinged 2" {
		t.Errorf("logs = %q", r.Logs)
	}
	if string(r.Partial) != `{"pinged":2}` {
		t.Errorf("partial = %s", r.Partial)
	}
	t.Logf("cancel → E_CANCELLED result on the wire: %v (in-process tier, in-memory transport)", latency)
	if rec := h.audit.waitRun(t); rec["code"] != string(sandbox.ECancelled) {
		t.Fatalf("audit: run ended with %v", rec["code"])
	}
}

// TestTimeoutReturnsPartial: on E_TIMEOUT the result still has the calls,
// the logs and the last value saved with progress(value).
func TestTimeoutReturnsPartial(t *testing.T) {
	h := newHarness(t, options{})
	res := h.call(t, "run_code", map[string]any{"timeout_ms": 300, "code": `
		const done = [];
		for (let n = 0; n < 3; n++) {
			done.push(await tools.ping({n}));
			progress({done});
		}
		console.log("now the slow part");
		for (;;) {}`})
	wantCode(t, res, sandbox.ETimeout)
	r := decodeStructured[longResult](t, res)
	if r.Calls.Total != 3 || r.Calls.OK != 3 {
		t.Errorf("calls = %+v, want 3 ok", r.Calls)
	}
	if len(r.Logs) != 1 || r.Logs[0] != "now the slow part" {
		t.Errorf("logs = %q", r.Logs)
	}
	if string(r.Partial) != `{"done":[1,2,3]}` {
		t.Errorf("partial = %s, want {\"done\":[1,2,3]}", r.Partial)
	}
	// On success the result is the answer: no partial.
	ok := decodeStructured[longResult](t, h.call(t, "run_code", map[string]any{"code": `progress(1); return 2`}))
	if !ok.OK || ok.Partial != nil {
		t.Errorf("success: %+v, partial %s; want no partial", ok.runResult, ok.Partial)
	}
}

// TestReadOutputPaging: a result over the budget comes back cut, with an
// output_ref; paging through it with read_output reassembles exactly the
// result's JSON text, whatever the page size, across multi-byte characters.
func TestReadOutputPaging(t *testing.T) {
	h := newHarness(t, options{})
	// About 700 KB of compact JSON with multi-byte characters, quotes and
	// escapes; the program returns it unchanged, so the result's JSON is
	// exactly input's compact encoding.
	items := make([]map[string]any, 6000)
	for i := range items {
		items[i] = map[string]any{"i": i, "s": strings.Repeat("é日\"\\x", 10) + "\n", "ok": i%2 == 0}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(items); err != nil {
		t.Fatal(err)
	}
	want := bytes.TrimSpace(buf.Bytes())

	res := h.call(t, "run_code", map[string]any{"code": `return input`, "input": json.RawMessage(want)})
	r := decodeStructured[longResult](t, res)
	if !r.OK || !r.Truncated || r.OutputRef == "" || r.OutputBytes != len(want) {
		t.Fatalf("ok %v truncated %v ref %q bytes %d; want a cut result of %d bytes with a ref", r.OK, r.Truncated, r.OutputRef, r.OutputBytes, len(want))
	}
	if len(textJSON(t, res)) > 300<<10 {
		t.Errorf("the cut answer is %d bytes; want it near the 256 KiB budget", len(textJSON(t, res)))
	}
	var first string
	if err := json.Unmarshal(r.Result, &first); err != nil {
		t.Fatalf("result of a cut run is not a string: %v", err)
	}
	if len(first) != r.OutputNextOffset || !bytes.HasPrefix(want, []byte(first)) {
		t.Fatalf("first page: %d bytes, next offset %d, prefix %v", len(first), r.OutputNextOffset, bytes.HasPrefix(want, []byte(first)))
	}

	for _, limit := range []int{65536, 99991, 7} {
		if limit == 7 {
			// A tiny page size over a short stretch: characters are never split.
			got := first
			off := r.OutputNextOffset
			for i := 0; i < 50; i++ {
				p := readPage(t, h, r.OutputRef, off, limit)
				got += p.Data
				off = p.NextOffset
			}
			if !strings.HasPrefix(string(want), got) {
				t.Fatalf("limit 7: pages do not continue the text")
			}
			continue
		}
		got := []byte(first)
		off, pages := r.OutputNextOffset, 0
		for {
			p := readPage(t, h, r.OutputRef, off, limit)
			if p.Offset != off || p.TotalBytes != len(want) || len(p.Data) > limit {
				t.Fatalf("page at %d: %+v", off, p)
			}
			got = append(got, p.Data...)
			off = p.NextOffset
			pages++
			if p.EOF {
				break
			}
			if pages > 100 {
				t.Fatal("no end")
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("limit %d: reassembled %d bytes differ from the %d-byte result", limit, len(got), len(want))
		}
		t.Logf("limit %d: %d pages after the first", limit, pages)
	}

	// Past the end, an unknown ref, a bad ref: E_TOOL_ARGS with a hint.
	for _, args := range []map[string]any{
		{"ref": r.OutputRef, "offset": len(want) + 1},
		{"ref": "out_00000000000000000000000000000000"},
		{"ref": r.OutputRef, "limit": 0},
		{"ref": r.OutputRef, "whence": 1},
		{},
	} {
		e := wantCode(t, h.call(t, "read_output", args), sandbox.EToolArgs)
		if e.Hint == "" {
			t.Errorf("%v: no hint in %+v", args, e)
		}
	}
	// The end itself is an empty last page.
	if p := readPage(t, h, r.OutputRef, len(want), 10); !p.EOF || p.Data != "" || p.NextOffset != len(want) {
		t.Errorf("page at the end: %+v", p)
	}
}

// TestReadOutputLogs: logs over their budget show what fits, and logs_ref
// pages through the whole console output, one entry per line.
func TestReadOutputLogs(t *testing.T) {
	h := newHarness(t, options{})
	res := h.call(t, "run_code", map[string]any{"code": `
		for (let i = 0; i < 300; i++) console.log(i + " " + "é日x".repeat(100));
		return "done"`})
	var r struct {
		longResult
		LogsRef        string `json:"logs_ref"`
		LogsBytes      int    `json:"logs_bytes"`
		LogsNextOffset int    `json:"logs_next_offset"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var entries []string
	for i := 0; i < 300; i++ {
		entries = append(entries, fmt.Sprint(i)+" "+strings.Repeat("é日x", 100))
	}
	want := strings.Join(entries, "\n")
	shown := strings.Join(r.Logs, "\n")
	if !r.OK || !r.Truncated || r.LogsRef == "" || r.OutputRef != "" || r.LogsBytes != len(want) ||
		r.LogsNextOffset != len(shown) || !strings.HasPrefix(want, shown) || len(shown) > 66<<10 {
		t.Fatalf("ok %v truncated %v logs_ref %q logs_bytes %d next %d, %d bytes shown", r.OK, r.Truncated, r.LogsRef, r.LogsBytes, r.LogsNextOffset, len(shown))
	}
	got := shown
	for off := r.LogsNextOffset; ; {
		p := readPage(t, h, r.LogsRef, off, 50000)
		got += p.Data
		off = p.NextOffset
		if p.EOF {
			break
		}
	}
	if got != want {
		t.Fatalf("reassembled logs: %d bytes, want %d", len(got), len(want))
	}
}

// TestProgressHeartbeat: while nothing changes (one call in flight for a
// long time), the server still sends a notification each second, with the
// elapsed time moving on; the tool lets the run go on only once the client
// has seen two notifications that differ in nothing but the time.
func TestProgressHeartbeat(t *testing.T) {
	var (
		mu    sync.Mutex
		prev  string
		beats = make(chan struct{})
		once  sync.Once
	)
	stripTime := regexp.MustCompile(`, [0-9.]+s elapsed`)
	wait := &tools.Tool{Name: "wait", Description: "Waits for a heartbeat.",
		Handler: func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			select {
			case <-beats:
				return json.RawMessage("true"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	var elapsed []string
	h := newHarness(t, options{extra: []*tools.Tool{wait}, progress: time.Millisecond,
		client: mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			m := stripTime.ReplaceAllString(r.Params.Message, "")
			if m == prev && strings.Contains(m, "1 in flight") {
				once.Do(func() { close(beats) })
			}
			prev = m
			elapsed = append(elapsed, r.Params.Message)
		}}})
	params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `return await tools.wait({})`}}
	params.SetProgressToken(7)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("run: %v %v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("notifications: %q", elapsed)
}

type page struct {
	Ref        string `json:"ref"`
	Offset     int    `json:"offset"`
	Data       string `json:"data"`
	NextOffset int    `json:"next_offset"`
	TotalBytes int    `json:"total_bytes"`
	EOF        bool   `json:"eof"`
}

func readPage(t *testing.T, h *harness, ref string, offset, limit int) page {
	t.Helper()
	res := h.call(t, "read_output", map[string]any{"ref": ref, "offset": offset, "limit": limit})
	if res.IsError {
		t.Fatalf("read_output(%d, %d): %v", offset, limit, res.Content)
	}
	textJSON(t, res)
	return decodeStructured[page](t, res)
}

// TestOutputRefBoundToPrincipal: a ref issued to one principal is unknown
// to another, over authenticated HTTP.
func TestOutputRefBoundToPrincipal(t *testing.T) {
	runner := newPipeline(t, bindings.BrokerConfig{}, bindings.RunnerConfig{Limits: sandbox.Limits{MaxResultBytes: 1 << 10}}, demo.Tools()...)
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner, Logger: slog.New(slog.DiscardHandler), Tokens: []bearer.Token{
		{SHA256: bearer.HashToken("a-token"), Principal: bindings.Principal{ID: "alice"}},
		{SHA256: bearer.HashToken("b-token"), Principal: bindings.Principal{ID: "bob"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestHTTPServer(t, srv.HTTPHandler())
	alice := connectBearer(t, ts.URL+"/mcp", "a-token")
	bob := connectBearer(t, ts.URL+"/mcp", "b-token")
	r := cutResult(t, alice)
	if r.OutputBytes != 5002 {
		t.Fatalf("want a cut result with a ref, got %+v", r)
	}
	read := func(cs *mcp.ClientSession) *mcp.CallToolResult { return readRest(t, cs, r) }
	if res := read(alice); res.IsError {
		t.Fatalf("alice cannot read her own output: %v", res.Content)
	}
	wantCode(t, read(bob), sandbox.EToolArgs)
}

// BenchmarkCancel measures the time from the client's cancellation to the
// server's E_CANCELLED answer on the wire, for a run blocked in a tool call
// (in-process tier, in-memory transport).
func BenchmarkCancel(b *testing.B) {
	started := make(chan struct{}, 1)
	cat, err := tools.NewCatalog(blocker(started))
	if err != nil {
		b.Fatal(err)
	}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		b.Fatal(err)
	}
	runner, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Executor: js.New(js.Config{})})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Config{Runner: runner})
	if err != nil {
		b.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	sctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = srv.Run(sctx, st) }()
	wire := &wireLog{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(sctx, wire, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		wire.mu.Lock()
		wire.results = nil
		wire.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": `await tools.block({})`}})
		}()
		<-started
		t0 := time.Now()
		cancel()
		for {
			wire.mu.Lock()
			n, added := len(wire.results), wire.added()
			wire.mu.Unlock()
			if n > 0 {
				break
			}
			<-added
		}
		lat = append(lat, time.Since(t0))
		<-done
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs/cancel")
}

// cutResult runs a program on cs whose 5,000-character result is over the
// test servers' 1 KiB MaxResultBytes, and returns the cut result, which
// must carry an output ref.
func cutResult(t *testing.T, cs *mcp.ClientSession) longResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code",
		Arguments: map[string]any{"code": `return "x".repeat(5000)`}})
	if err != nil || res.IsError {
		t.Fatalf("run: %v %v", err, res)
	}
	r := decodeStructured[longResult](t, res)
	if r.OutputRef == "" {
		t.Fatalf("want a cut result with a ref, got %+v", r)
	}
	return r
}

// readRest calls read_output on cs for the rest of r.
func readRest(t *testing.T, cs *mcp.ClientSession, r longResult) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_output",
		Arguments: map[string]any{"ref": r.OutputRef, "offset": r.OutputNextOffset}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
