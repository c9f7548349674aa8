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

// expireIdle discards the workers kept idle for longer than idleTTL.
func (p *Pool) expireIdle() {
	defer p.fillWG.Done()
	t := time.NewTicker(idleTTL / 4)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			for _, w := range p.sched.expire(now.Add(-idleTTL)) {
				w.discard()
			}
		}
	}
}

// fill keeps Size workers warm or starting.
func (p *Pool) fill() {
	defer p.fillWG.Done()
	backoff := 10 * time.Millisecond
	started := 0
	for {
		select {
		case p.slots <- struct{}{}:
		case <-p.ctx.Done():
			return
		}
		w, err := p.start()
		if err != nil {
			<-p.slots
			p.mu.Lock()
			p.lastErr = err
			p.mu.Unlock()
			p.log.Error("worker did not start", "err", err)
			if p.cfg.NoRefill {
				close(p.failed)
				return
			}
			select {
			case <-time.After(backoff):
			case <-p.ctx.Done():
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 10 * time.Millisecond
		p.mu.Lock()
		p.lastErr = nil
		p.mu.Unlock()
		select {
		case p.ready <- w:
		case <-p.ctx.Done():
			w.kill(endShutdown)
			w.release()
			return
		}
		if started++; p.cfg.NoRefill && started >= p.cfg.Size {
			return
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
	p.starting.Store(int64(cmd.Process.Pid))
	defer p.starting.Store(0)
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
