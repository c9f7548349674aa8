package bindings

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sends records what a ProgressThrottle sent.
type sends struct {
	mu  sync.Mutex
	seq []uint64
	at  []time.Duration
}

func (s *sends) send(p RunProgress, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq = append(s.seq, p.Seq)
	s.at = append(s.at, elapsed)
}

func (s *sends) get() ([]uint64, []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uint64(nil), s.seq...), append([]time.Duration(nil), s.at...)
}

func (s *sends) want(t *testing.T, when string, seq ...uint64) {
	t.Helper()
	synctest.Wait() // the throttle's goroutine is idle: what it sends is sent
	got, at := s.get()
	if len(got) != len(seq) {
		t.Fatalf("%s: sent %v at %v, want %v", when, got, at, seq)
	}
	for i := range seq {
		if got[i] != seq[i] {
			t.Fatalf("%s: sent %v at %v, want %v", when, got, at, seq)
		}
	}
}

// TestProgressThrottle: a change is sent at once, then at most one send
// per Interval with the newest snapshot (older ones ignored), a heartbeat
// while nothing changes, and nothing after Stop. It runs in a synctest
// bubble, so every time below is exact.
func TestProgressThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		th := &ProgressThrottle{Interval: 100 * time.Millisecond, Heartbeat: time.Second, OnChange: true, Send: s.send}
		th.Start()

		th.Update(RunProgress{Seq: 1})
		s.want(t, "the first change", 1)

		th.Update(RunProgress{Seq: 3})
		th.Update(RunProgress{Seq: 2}) // older: ignored
		th.Update(RunProgress{Seq: 4})
		s.want(t, "changes within the interval", 1)
		time.Sleep(100 * time.Millisecond)
		s.want(t, "after the interval", 1, 4)

		th.Update(RunProgress{Seq: 4}) // not newer: nothing to send
		time.Sleep(500 * time.Millisecond)
		s.want(t, "no change", 1, 4)

		time.Sleep(400 * time.Millisecond) // 1 s since Start: the heartbeat
		s.want(t, "the heartbeat", 1, 4, 4)
		if _, at := s.get(); at[2] != time.Second {
			t.Errorf("heartbeat sent at %v, want 1s", at[2])
		}

		th.Stop()
		th.Update(RunProgress{Seq: 5})
		time.Sleep(time.Hour)
		s.want(t, "after Stop", 1, 4, 4)
		th.Stop() // again: nothing
	})
}

// TestProgressThrottleHeartbeatOnly: without OnChange, only the heartbeat
// sends (the CLI's progress line: redrawn every tick), and a run shorter
// than a beat sends nothing.
func TestProgressThrottleHeartbeatOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sends
		th := &ProgressThrottle{Heartbeat: 10 * time.Millisecond, Send: s.send}
		th.Start()
		th.Update(RunProgress{Seq: 1})
		s.want(t, "a change without OnChange")
		time.Sleep(10 * time.Millisecond)
		s.want(t, "one beat", 1)
		time.Sleep(20 * time.Millisecond)
		s.want(t, "three beats, no change", 1, 1, 1)
		th.Stop()

		var quiet sends
		th = &ProgressThrottle{Heartbeat: time.Hour, Send: quiet.send}
		th.Start()
		th.Update(RunProgress{Seq: 1})
		th.Stop()
		quiet.want(t, "a run shorter than a beat")
	})
}

// TestProgressThrottleNeverBlocks: Update returns while Send is stuck (a
// client or terminal that does not read), and the snapshot it recorded is
// the one sent once Send returns.
func TestProgressThrottleNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var s sends
		th := &ProgressThrottle{OnChange: true, Send: func(p RunProgress, d time.Duration) {
			s.send(p, d)
			if p.Seq == 1 {
				<-release
			}
		}}
		th.Start()
		th.Update(RunProgress{Seq: 1})
		synctest.Wait() // Send is stuck on the first snapshot
		for seq := uint64(2); seq <= 100; seq++ {
			th.Update(RunProgress{Seq: seq}) // would deadlock the bubble if it blocked
		}
		close(release)
		s.want(t, "after the stuck send", 1, 100)
		th.Stop()
	})
}
