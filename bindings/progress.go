package bindings

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sandcall/sandcall/sandbox"
)

// RunProgress is a snapshot of a run in progress (RunRequest.Progress).
type RunProgress struct {
	// Seq orders snapshots: snapshots may reach the callback out of order
	// from several goroutines, and the one with the largest Seq is the
	// newest.
	Seq uint64
	// Calls counts the calls finished so far.
	Calls sandbox.CallStats
	// InFlight counts the calls started and not finished: waiting for
	// authorization, an approval, an in-flight slot or the tool itself.
	InFlight int
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Partials counts the values stored with progress(value) so far, and
	// PartialBytes is the size of the latest one.
	Partials     int
	PartialBytes int
	// Tools is what the tools of calls in flight reported of their own
	// progress (an upstream server's notifications/progress), oldest call
	// first, at most MaxToolProgress of them.
	Tools []ToolProgress
}

// ToolProgress is one call's progress as its tool reported it.
type ToolProgress struct {
	Tool     string // the name the program called
	Progress float64
	Total    float64 // 0: unknown
	Message  string  // escaped (Visible) and capped at 80 bytes
}

// MaxToolProgress caps RunProgress.Tools.
const MaxToolProgress = 3

// String is "github_search: 40/100 (indexing)".
func (t ToolProgress) String() string {
	s := t.Tool + ": " + strconv.FormatFloat(t.Progress, 'g', -1, 64)
	if t.Total > 0 {
		s += "/" + strconv.FormatFloat(t.Total, 'g', -1, 64)
	}
	if t.Message != "" {
		s += " (" + t.Message + ")"
	}
	return s
}

// Text describes the snapshot for a person, at elapsed since the run
// started (later than Elapsed when a snapshot is shown again while nothing
// changes): "12 calls done (11 ok, 1 failed), 3 in flight, 2.5s elapsed;
// progress saved once".
func (p RunProgress) Text(elapsed time.Duration) string {
	c := p.Calls
	noun := "calls"
	if c.Total == 1 {
		noun = "call"
	}
	msg := fmt.Sprintf("%d %s done (%d ok, %d failed", c.Total, noun, c.OK, c.Failed)
	if c.Denied > 0 {
		msg += fmt.Sprintf(", %d denied", c.Denied)
	}
	msg += fmt.Sprintf("), %d in flight, %.1fs elapsed", p.InFlight, elapsed.Seconds())
	switch p.Partials {
	case 0:
	case 1:
		msg += "; progress saved once"
	default:
		msg += fmt.Sprintf("; progress saved %d times", p.Partials)
	}
	for i, t := range p.Tools {
		sep := ", "
		if i == 0 {
			sep = "; "
		}
		msg += sep + t.String()
	}
	return msg
}

// ProgressThrottle hands a run's progress snapshots (RunRequest.Progress)
// to Send at a bounded rate, from one goroutine of its own: Update, called
// from the runner's goroutines on every call started or finished, never
// blocks, and a slow client or terminal only delays the next snapshot. It
// keeps the newest snapshot (largest Seq); Send gets it with the time since
// Start. The MCP server's run_code progress notifications and the CLI's
// progress line both go through it.
//
// Set the fields, call Start, pass Update as RunRequest.Progress, and call
// Stop when the run ends: no Send is under way or follows once Stop
// returns.
type ProgressThrottle struct {
	// Interval is the least time between two sends.
	Interval time.Duration
	// Heartbeat, if positive, sends the newest snapshot again every
	// Heartbeat while nothing changes (a heartbeat skipped when a send
	// happened within the last half Heartbeat), so that the elapsed time
	// moves and a client that resets its request timeout on progress
	// keeps waiting.
	Heartbeat time.Duration
	// OnChange sends a newer snapshot as soon as Interval allows. If
	// false, only the heartbeat sends: a run shorter than a Heartbeat
	// sends nothing.
	OnChange bool
	// Send is called with the snapshot and the time since Start, from the
	// throttle's goroutine, one call at a time.
	Send func(p RunProgress, elapsed time.Duration)

	start time.Time
	wake  chan struct{}
	done  chan struct{}
	once  sync.Once // closes done
	wg    sync.WaitGroup

	mu     sync.Mutex // guards latest
	latest RunProgress
}

// Start starts the throttle's goroutine; call it once, before Update.
func (t *ProgressThrottle) Start() {
	t.start = time.Now()
	t.wake = make(chan struct{}, 1)
	t.done = make(chan struct{})
	t.wg.Add(1)
	go t.loop()
}

// Update records p if it is newer than the snapshot the throttle holds
// (RunRequest.Progress). It never blocks.
func (t *ProgressThrottle) Update(p RunProgress) {
	t.mu.Lock()
	if p.Seq > t.latest.Seq {
		t.latest = p
	}
	t.mu.Unlock()
	if !t.OnChange {
		return
	}
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Stop ends the throttle and waits for its goroutine. Calling it again
// does nothing.
func (t *ProgressThrottle) Stop() {
	t.once.Do(func() { close(t.done) })
	t.wg.Wait()
}

func (t *ProgressThrottle) loop() {
	defer t.wg.Done()
	var beat <-chan time.Time
	if t.Heartbeat > 0 {
		tick := time.NewTicker(t.Heartbeat)
		defer tick.Stop()
		beat = tick.C
	}
	var (
		sent uint64 // Seq of the last snapshot sent
		last time.Time
	)
	for {
		heartbeat := false
		select {
		case <-t.wake:
		case <-beat:
			heartbeat = true
		case <-t.done:
			return
		}
		if wait := t.Interval - time.Since(last); !last.IsZero() && wait > 0 {
			w := time.NewTimer(wait)
			select {
			case <-w.C:
			case <-t.done:
				w.Stop()
				return
			}
		}
		t.mu.Lock()
		p := t.latest
		t.mu.Unlock()
		if p.Seq <= sent && !(heartbeat && (last.IsZero() || time.Since(last) >= t.Heartbeat/2)) {
			continue
		}
		sent, last = p.Seq, time.Now()
		t.Send(p, time.Since(t.start))
	}
}
