package cli

import (
	"fmt"
	"io"
	"os"
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
// draw. update is called from the runner's goroutines and never blocks: a
// terminal that does not take the line (stopped with ^S) holds up only
// the throttle's goroutine (bindings.ProgressThrottle).
type progressLine struct {
	w     io.Writer
	t     *bindings.ProgressThrottle
	drawn bool // written by the throttle's goroutine only; read after stop
}

func newProgressLine(w io.Writer, tick time.Duration) *progressLine {
	p := &progressLine{w: w}
	p.t = &bindings.ProgressThrottle{Heartbeat: tick, Send: p.draw}
	p.t.Start()
	return p
}

func (p *progressLine) update(st bindings.RunProgress) { p.t.Update(st) }

func (p *progressLine) draw(st bindings.RunProgress, elapsed time.Duration) {
	p.drawn = true
	_, _ = io.WriteString(p.w, "\r\x1b[K"+"running… "+st.Text(elapsed))
}

// stop ends the drawing and erases the line, so that what follows (logs,
// the result) starts on a clean line.
func (p *progressLine) stop() {
	p.t.Stop()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
