package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/sandcall/sandcall/bindings"
)

// isTerminal reports whether w is a terminal (a character device), without
// a terminal library: the progress line is drawn only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressLine shows a run's progress on one terminal line, redrawn in
// place with "\r" every tick (the elapsed time moves even when nothing
// else does) and erased when the run ends. Runs shorter than a tick never
// draw. update is called from the runner's goroutines and never blocks.
type progressLine struct {
	w     io.Writer
	tick  time.Duration
	start time.Time
	done  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex // guards latest and drawn
	latest bindings.RunProgress
	drawn  bool
}

func newProgressLine(w io.Writer, tick time.Duration) *progressLine {
	p := &progressLine{w: w, tick: tick, start: time.Now(), done: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *progressLine) update(st bindings.RunProgress) {
	p.mu.Lock()
	if st.Seq > p.latest.Seq {
		p.latest = st
	}
	p.mu.Unlock()
}

func (p *progressLine) loop() {
	defer p.wg.Done()
	t := time.NewTicker(p.tick)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		// Written outside the lock: a terminal that does not take the
		// line (stopped with ^S) must not block update.
		p.mu.Lock()
		line := "\r\x1b[K" + "running… " + p.latest.Text(time.Since(p.start))
		p.drawn = true
		p.mu.Unlock()
		_, _ = io.WriteString(p.w, line)
	}
}

// stop ends the drawing and erases the line, so that what follows (logs,
// the result) starts on a clean line.
func (p *progressLine) stop() {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
