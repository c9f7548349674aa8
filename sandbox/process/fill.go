package process

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// warmHold is how long demand keeps the warm workers it called for, and
// how long a used worker is kept idle for its principal: past it, the
// surplus goes, so that a pool after a burst is back to Config.Size warm
// workers within seconds.
const warmHold = 5 * time.Second

// demand remembers when jobs took warm workers (the last warmHold) and how
// long starts take, to size the warm pool.
type demand struct {
	takes []time.Time // oldest first
	start time.Duration
}

// maxTakes bounds the takes remembered: past it the oldest go (the
// estimate then spans less than warmHold, which only matters at more than
// maxTakes starts in warmHold).
const maxTakes = 256

func (d *demand) took(now time.Time) {
	if len(d.takes) == maxTakes {
		d.takes = append(d.takes[:0], d.takes[1:]...)
	}
	d.takes = append(d.takes, now)
}

func (d *demand) started(took time.Duration) {
	if d.start == 0 {
		d.start = took
	} else {
		d.start = (3*d.start + took) / 4
	}
}

// spares returns how many warm workers the demand calls for at now: the
// workers taken at the busiest second of the last warmHold, times twice
// the time a start takes (a worker taken is replaced before the next is
// needed), rounded up; zero without a take in warmHold.
func (d *demand) spares(now time.Time) int {
	k := 0
	for k < len(d.takes) && now.Sub(d.takes[k]) > warmHold {
		k++
	}
	d.takes = append(d.takes[:0], d.takes[k:]...)
	busiest := 0
	for i, j := 0, 0; j < len(d.takes); j++ {
		for d.takes[j].Sub(d.takes[i]) >= time.Second {
			i++
		}
		busiest = max(busiest, j-i+1)
	}
	if busiest == 0 {
		return 0
	}
	start := d.start
	if start == 0 {
		start = 50 * time.Millisecond // before the first start is measured
	}
	return int((time.Duration(busiest)*2*start + time.Second - 1) / time.Second)
}

// idle reports whether no warm worker was taken in warmHold before now.
func (d *demand) idle(now time.Time) bool {
	return len(d.takes) == 0 || now.Sub(d.takes[len(d.takes)-1]) > warmHold
}

// took records that a job took a warm worker, and has the filler replace
// it.
func (p *Pool) took(now time.Time) {
	p.mu.Lock()
	p.demand.took(now)
	p.mu.Unlock()
	p.kickFill()
}

// kickFill has the filler look again at what to start.
func (p *Pool) kickFill() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// target returns how many warm workers to keep, ready or starting: Size,
// or what the demand and the jobs waiting for a fresh worker call for, up
// to MaxWarm. Called with p.mu held.
func (p *Pool) target(now time.Time) int {
	return min(max(p.cfg.Size, p.demand.spares(now), int(p.wanting.Load())), p.cfg.MaxWarm)
}

// fill keeps the warm workers the pool wants, ready or starting, and
// retires the surplus when demand has gone; with NoRefill it starts Size
// workers once.
func (p *Pool) fill() {
	defer p.fillWG.Done()
	if p.cfg.NoRefill {
		p.mu.Lock()
		for range p.cfg.Size {
			p.spawn()
		}
		p.mu.Unlock()
		return
	}
	t := time.NewTicker(time.Second) // demand decays; failed starts are retried
	defer t.Stop()
	for {
		now := time.Now()
		p.mu.Lock()
		if !now.Before(p.retryAt) {
			for want := p.target(now); len(p.ready)+p.nstart < want; {
				p.spawn()
			}
		}
		retire := p.demand.idle(now)
		p.mu.Unlock()
		if retire {
			p.retireSurplus()
		}
		select {
		case <-p.kick:
		case <-t.C:
		case <-p.ctx.Done():
			return
		}
	}
}

// spawn starts one worker in the background; called with p.mu held.
func (p *Pool) spawn() {
	p.nstart++
	p.fillWG.Add(1)
	go func() {
		defer p.fillWG.Done()
		t0 := time.Now()
		w, err := p.start()
		p.mu.Lock()
		p.nstart--
		if err != nil {
			p.lastErr = err
			p.backoff = min(max(2*p.backoff, 10*time.Millisecond), 2*time.Second)
			p.retryAt = time.Now().Add(p.backoff)
			backoff := p.backoff
			p.mu.Unlock()
			p.log.Error("worker did not start", "err", err)
			if p.cfg.NoRefill {
				p.failedOnce.Do(func() { close(p.failed) })
			}
			time.AfterFunc(backoff, p.kickFill)
			return
		}
		p.lastErr, p.backoff, p.retryAt = nil, 0, time.Time{}
		p.demand.started(time.Since(t0))
		p.mu.Unlock()
		if p.ctx.Err() != nil {
			w.kill(endShutdown)
			w.release()
			return
		}
		select {
		case p.ready <- w: // room: ready and starting stay within MaxWarm
		default:
			w.discard()
		}
		p.kickFill()
	}()
}

// retireSurplus discards the warm workers past Size.
func (p *Pool) retireSurplus() {
	for len(p.ready) > p.cfg.Size {
		select {
		case w := <-p.ready:
			w.discard()
		default:
			return
		}
	}
}

// expireIdle discards the used workers kept idle for longer than warmHold.
func (p *Pool) expireIdle() {
	defer p.fillWG.Done()
	t := time.NewTicker(warmHold / 4)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			for _, w := range p.sched.expire(now.Add(-warmHold)) {
				w.discard()
			}
		}
	}
}

// start launches one worker and waits until it reports ready.
func (p *Pool) start() (*worker, error) {
	jobR, jobW, err := os.Pipe() // server → worker
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe() // worker → server
	if err != nil {
		jobR.Close()
		jobW.Close()
		return nil, err
	}
	cmd := exec.Command(p.cfg.Command[0], p.cfg.Command[1:]...)
	// GOMAXPROCS set explicitly, and the GODEBUG settings, keep the runtime
	// from opening cgroup files to track CPU quotas: a worker holds no open
	// files but its pipes. One P: a job is one guest goroutine (goja and
	// wazero run single-threaded), and with a second P every result the
	// frame reader hands to the engine woke another thread; with one the
	// hand-off stays on the thread (worker CPU per 1,000-call fan-out
	// 30.4-34.8 ms against 36.9-40.4 ms, per expense run 12.9-14.3 against
	// 13.6-17.6 ms, interleaved runs). Go's preemption still gives the
	// reader, the memory watchdog and the deadline's interrupt their turn
	// within its 10 ms time slice while a guest loops.
	cmd.Env = append(append([]string(nil), p.cfg.Env...),
		"GOMEMLIMIT="+strconv.FormatInt(p.cfg.MemoryBytes, 10),
		"GOMAXPROCS=1",
		"GODEBUG=containermaxprocs=0,updatemaxprocs=0")
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{jobR, outW} // fd 3: frames in, fd 4: frames out
	stderr := &capBuffer{max: 16 << 10}
	cmd.Stderr = stderr
	attr := &syscall.SysProcAttr{}
	if p.cfg.SysProcAttr != nil {
		*attr = *p.cfg.SysProcAttr
	}
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = attr
	err = startCmd(cmd)
	jobR.Close()
	outW.Close()
	if err != nil {
		jobW.Close()
		outR.Close()
		return nil, err
	}
	w := &worker{pool: p, cmd: cmd, in: outR, out: jobW, br: bufio.NewReaderSize(outR, 64<<10),
		fw: newFrameWriter(jobW), stderr: stderr, exited: make(chan struct{})}
	p.mu.Lock()
	p.live[w] = struct{}{}
	p.mu.Unlock()
	go w.reap()
	// A replacement usually starts while the job that took its predecessor
	// runs: on a small machine its start-up (exec, confinement, engine
	// warm-up) would compete with that job for the CPU. While jobs run, a
	// new worker starts at low priority and gets normal priority once it is
	// ready, or as soon as a job waits for it. (PRIO_PGRP reaches every
	// thread of the worker, which leads its own process group.)
	pid := cmd.Process.Pid
	p.mu.Lock()
	p.starting[pid] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.starting, pid)
		p.mu.Unlock()
	}()
	niced := p.running.Load() > 0 && p.wanting.Load() == 0
	if niced {
		_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, startNice)
		// A job that began waiting meanwhile may have missed the nice.
		if p.wanting.Load() > 0 {
			_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, 0)
		}
	}
	if p.cfg.OnStart != nil {
		if err := p.cfg.OnStart(cmd.Process.Pid); err != nil {
			w.kill(endShutdown)
			w.release()
			return nil, err
		}
	}
	type ready struct {
		kind byte
		body []byte
		err  error
	}
	rc := make(chan ready, 1)
	go func() {
		k, b, err := readFrame(w.br, MaxWorkerFrame)
		rc <- ready{k, b, err}
	}()
	t := time.NewTimer(p.cfg.StartTimeout)
	defer t.Stop()
	select {
	case r := <-rc:
		if r.err == nil && r.kind == kindReady {
			if niced {
				_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, 0)
			}
			return w, nil
		}
		w.kill(endShutdown)
		w.release()
		return nil, fmt.Errorf("worker did not report ready: %v (stderr: %s)", r.err, bytes.TrimSpace(stderr.Bytes()))
	case <-t.C:
		w.kill(endShutdown)
		w.release()
		return nil, fmt.Errorf("worker did not report ready within %s", p.cfg.StartTimeout)
	}
}

// startNice is the scheduling priority of a worker until it is ready.
const startNice = 10
