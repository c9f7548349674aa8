package bench

import (
	"context"
	"slices"
	"time"
)

// The memory workload's burst: memBurstRuns concurrent runs of 200 calls
// each (four batches of 50 pings) over the stdio session.
const (
	memBurstRuns    = 40
	memBurstProgram = `let t = 0;
for (let b = 0; b < 4; b++) {
  const ps = [];
  for (let i = 0; i < 50; i++) ps.push(tools.ping({ n: i }));
  for (const r of await Promise.all(ps)) t += r;
}
return t;`
	memBurstWant = "5100"
)

// How the memory workload samples: every memSample; idle is when the total
// has moved by less than memStable over memQuiet (at most memIdleWait
// after the session starts); after the burst it watches memAfter.
const (
	memSample   = 250 * time.Millisecond
	memQuiet    = 5 * time.Second
	memStable   = 1 << 20
	memIdleWait = 30 * time.Second
	memAfter    = 15 * time.Second
	// memReport is when after the burst the "after-burst" row's RSS is
	// read: the goal is to be back at the idle level by then.
	memReport = 10 * time.Second
)

// rss is one sample of a server's and its workers' resident memory, in KiB.
type rss struct {
	server  int
	workers []int
}

func (r rss) total() int {
	t := r.server
	for _, w := range r.workers {
		t += w
	}
	return t
}

func sampleRSS(pid int) rss {
	r := rss{server: vmRSS(pid)}
	for _, c := range childPIDs(pid) {
		if kb := vmRSS(c); kb > 0 {
			r.workers = append(r.workers, kb)
		}
	}
	slices.Sort(r.workers)
	slices.Reverse(r.workers)
	return r
}

// memory measures `sandcall serve --demo` over stdio with its default
// settings in tier, as an agent's client starts it: the resident memory of
// the server and of each warm worker once they are idle ("idle-memory"),
// then a burst of memBurstRuns concurrent 200-call runs, and what server and
// workers hold memReport after it ended ("after-burst", with the peak and
// the time the total took to come back within 10% or 8 MB of idle: a
// server that served a burst maps some more of its code again).
func memory(ctx context.Context, exe, tier string) ([]Row, error) {
	s, err := startStdio(ctx, exe, "--isolation", tier)
	if err != nil {
		return nil, err
	}
	defer s.close()
	pid := s.pid()
	idle := waitIdle(pid)
	rows := []Row{memRow("idle-memory", tier, idle)}

	stop := make(chan struct{})
	peakc := make(chan int, 1)
	go func() { // the peak during the burst
		peak := 0
		t := time.NewTicker(memSample)
		defer t.Stop()
		for {
			peak = max(peak, sampleRSS(pid).total())
			select {
			case <-stop:
				peakc <- peak
				return
			case <-t.C:
			}
		}
	}()
	err = concurrently(ctx, s.cs, memBurstRuns, memBurstProgram, nil, memBurstWant)
	close(stop)
	peak := <-peakc
	if err != nil {
		return nil, err
	}
	ended := time.Now()
	back := max(idle.total()+idle.total()/10, idle.total()+8<<10)
	settle := -1.0
	var at rss
	for t := time.NewTicker(memSample); time.Since(ended) < memAfter; <-t.C {
		r := sampleRSS(pid)
		peak = max(peak, r.total())
		if settle < 0 && r.total() <= back {
			settle = ms(time.Since(ended))
		}
		if time.Since(ended) <= memReport {
			at = r
		}
		if settle >= 0 && time.Since(ended) >= memReport {
			break
		}
	}
	after := memRow("after-burst", tier, at)
	after.PeakRSSMB = mb(peak)
	after.SettleMS = &settle
	return append(rows, after), nil
}

// waitIdle samples until the total has been stable for memQuiet, or
// memIdleWait has passed, and returns the last sample.
func waitIdle(pid int) rss {
	start := time.Now()
	var hist []rss
	for {
		r := sampleRSS(pid)
		hist = append(hist, r)
		if n := int(memQuiet / memSample); len(hist) > n {
			lo, hi := r.total(), r.total()
			for _, h := range hist[len(hist)-n-1:] {
				lo, hi = min(lo, h.total()), max(hi, h.total())
			}
			if hi-lo < memStable>>10 {
				return r
			}
		}
		if time.Since(start) > memIdleWait {
			return r
		}
		time.Sleep(memSample)
	}
}

func memRow(name, tier string, r rss) Row {
	row := Row{Workload: name, Tier: tier, ServerRSSMB: mb(r.server), RSSMB: mb(r.total())}
	for _, w := range r.workers {
		row.WorkerRSSMB = append(row.WorkerRSSMB, mb(w))
	}
	return row
}

func mb(kb int) float64 { return float64(kb*10/1024) / 10 }
