package process

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// writeLog records every write it is given, each as one piece.
type writeLog struct {
	mu     sync.Mutex
	writes [][]byte
	wrote  chan struct{} // one token per write
}

func newWriteLog() *writeLog { return &writeLog{wrote: make(chan struct{}, 64)} }

func (l *writeLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.writes = append(l.writes, bytes.Clone(p))
	l.mu.Unlock()
	l.wrote <- struct{}{}
	return len(p), nil
}

func (l *writeLog) all() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.writes)
}

// results decodes the result frames in b: id → payload.
func results(t *testing.T, b []byte) map[uint64]string {
	t.Helper()
	got := map[uint64]string{}
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		k, body, err := readFrame(r, MaxServerFrame)
		if err != nil || k != kindResult {
			t.Fatalf("frame %q: %v", k, err)
		}
		id, isErr, payload, err := decodeResult(body)
		if err != nil || isErr {
			t.Fatalf("result %d: isErr %v, %v", id, isErr, err)
		}
		got[id] = string(payload)
	}
	return got
}

// TestAnswersOfABatchLeaveTogether: the answers to calls read in one batch
// go to the worker in one write once the last is answered, each intact.
func TestAnswersOfABatchLeaveTogether(t *testing.T) {
	wl := newWriteLog()
	fw := newFrameWriter(wl)
	a := newAnswers(fw)
	a.hold = time.Hour // only the batch's end may send them
	a.started(true)
	a.started(true)
	a.started(false) // the last frame buffered
	var wg sync.WaitGroup
	for id := uint64(1); id <= 3; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.answer(id, false, []byte(strings.Repeat("7", int(id))))
		}()
	}
	wg.Wait()
	<-wl.wrote
	a.end()
	if err := fw.close(); err != nil {
		t.Fatal(err)
	}
	w := wl.all()
	if len(w) != 1 {
		t.Fatalf("%d writes, want 1", len(w))
	}
	if got, want := results(t, w[0]), map[uint64]string{1: "7", 2: "77", 3: "777"}; !maps(got, want) {
		t.Fatalf("answers %v, want %v", got, want)
	}
}

// TestAnswerHeldBriefly: an answer does not wait for a call still in
// flight beyond the hold, nor once the held answers fill the pipe's share.
func TestAnswerHeldBriefly(t *testing.T) {
	wl := newWriteLog()
	fw := newFrameWriter(wl)
	defer fw.close()
	a := newAnswers(fw)
	a.hold = time.Millisecond
	a.started(false)
	a.started(false)
	a.answer(1, false, []byte("1"))
	<-wl.wrote // the hold ended; call 2 is still in flight
	if got := results(t, wl.all()[0]); !maps(got, map[uint64]string{1: "1"}) {
		t.Fatalf("answers %v, want call 1's", got)
	}

	a.hold = time.Hour
	a.started(false)
	big := strings.Repeat("x", holdBytes)
	a.answer(3, false, []byte(big)) // calls 2 and 4 in flight, but a full batch
	<-wl.wrote
	if got := results(t, wl.all()[1]); !maps(got, map[uint64]string{3: big}) {
		t.Fatalf("answers %d, want call 3's", len(got))
	}
}

func maps(a, b map[uint64]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// slowFastHost answers "fast" at once and "slow" only once the worker has
// logged that it has fast's answer: an answer held until every call of
// its batch returned would never arrive.
type slowFastHost struct {
	once     sync.Once
	fastSeen chan struct{}
}

func (h *slowFastHost) Call(ctx context.Context, tool string, _ json.RawMessage) (json.RawMessage, error) {
	if tool == "slow" {
		select {
		case <-h.fastSeen:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return json.RawMessage(`"` + tool + `"`), nil
}

func (h *slowFastHost) Log(entry string) {
	if entry == "fast answered" {
		h.once.Do(func() { close(h.fastSeen) })
	}
}

// TestSlowCallDoesNotHoldTheBatch: through a real worker, a call answered
// at once reaches the program while another call of its batch is still
// running.
func TestSlowCallDoesNotHoldTheBatch(t *testing.T) {
	p := newPool(t, Config{Size: 1})
	h := &slowFastHost{fastSeen: make(chan struct{})}
	o := p.Execute(context.Background(), job("slowfast", 30*time.Second), h)
	if o.Err != nil || string(o.Value) != `["fast","slow"]` {
		t.Fatalf("value %s, err %v; want both answers", o.Value, o.Err)
	}
}

var _ sandbox.LogSink = (*slowFastHost)(nil)

// gateWriter blocks its first write until open is closed.
type gateWriter struct {
	open  chan struct{}
	first sync.Once
	mu    sync.Mutex
	buf   bytes.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.first.Do(func() { <-g.open })
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// TestFrameWriterKeepsOrder: a frame a sender writes itself (sendNow)
// never overtakes frames queued before it, whether the writer goroutine
// is busy writing or idle.
func TestFrameWriterKeepsOrder(t *testing.T) {
	g := &gateWriter{open: make(chan struct{})}
	fw := newFrameWriter(g)
	send := func(i int, now bool) {
		f := qframe{b: encodeFrame(kindLog, []byte(strconv.Itoa(i)))}
		var err error
		if now {
			err = fw.sendNow(f)
		} else {
			err = fw.enqueue(f)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	send(0, false) // the writer goroutine takes it and blocks in the write
	for i := 1; i < 40; i++ {
		send(i, i%3 == 0)
	}
	close(g.open)
	for i := 40; i < 80; i++ {
		send(i, i%2 == 0)
	}
	if err := fw.close(); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(g.buf.Bytes())
	for want := 0; want < 80; want++ {
		_, body, err := readFrame(r, MaxServerFrame)
		if err != nil || string(body) != strconv.Itoa(want) {
			t.Fatalf("frame %d: %q, %v", want, body, err)
		}
	}
}
