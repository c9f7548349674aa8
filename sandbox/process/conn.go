package process

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// frameWriter coalesces frames from many goroutines into few writes: one
// goroutine drains a queue of encoded frames into a buffered writer and
// flushes when the queue is empty. Under load (a 1,000-call fan-out) many
// frames share one write system call. A sender may also write its frame
// itself when nothing is queued or being written (sendNow): the frames
// that start a job, end it and carry a batch of calls or answers then
// leave without waking the writer goroutine first.
type frameWriter struct {
	q    chan qframe
	done chan struct{}
	err  atomic.Pointer[error] // the first write error

	mu     sync.RWMutex // senders hold it shared, close exclusively
	closed bool

	// wmu is held while frames are written to bw, by the writer goroutine
	// or by a sender (sendNow); queued counts the frames queued and not
	// yet written, so that a sender's own write never overtakes them.
	wmu    sync.Mutex
	bw     *bufio.Writer
	queued atomic.Int64
}

func newFrameWriter(w io.Writer) *frameWriter {
	fw := &frameWriter{q: make(chan qframe, 256), done: make(chan struct{}), bw: bufio.NewWriterSize(w, 64<<10)}
	go fw.loop()
	return fw
}

// qframe is a queued frame: b, then tail if set (a payload that goes out
// as it is, not copied into a frame of its own first); flushed, if set, is
// closed once the frame has been written to the underlying writer (or
// writing failed).
type qframe struct {
	b, tail []byte
	// parts, if set, are written after b and tail: several frames that
	// leave in one write.
	parts   [][]byte
	flushed chan struct{}
}

// write writes f to bw.
func (f qframe) write(bw *bufio.Writer) error {
	_, err := bw.Write(f.b)
	if err == nil && len(f.tail) > 0 {
		_, err = bw.Write(f.tail)
	}
	for _, p := range f.parts {
		if err != nil {
			break
		}
		_, err = bw.Write(p)
	}
	return err
}

func (fw *frameWriter) loop() {
	defer close(fw.done)
	var acks []chan struct{}
	for f := range fw.q {
		fw.wmu.Lock()
		err := fw.failed() // a sender's own write may have failed
		if err == nil {
			err = f.write(fw.bw)
		}
		n := int64(1)
		if f.flushed != nil {
			acks = append(acks, f.flushed)
		}
	drain:
		for err == nil {
			select {
			case f, ok := <-fw.q:
				if !ok {
					break drain
				}
				err = f.write(fw.bw)
				n++
				if f.flushed != nil {
					acks = append(acks, f.flushed)
				}
			default:
				break drain
			}
		}
		if err == nil {
			err = fw.bw.Flush()
		}
		fw.queued.Add(-n)
		fw.wmu.Unlock()
		for _, a := range acks {
			close(a)
		}
		acks = acks[:0]
		if err != nil {
			fw.err.CompareAndSwap(nil, &err)
			for f := range fw.q { // keep draining, so no sender blocks, until close
				if f.flushed != nil {
					close(f.flushed)
				}
			}
			return
		}
	}
}

// sendNow writes f itself when no frame is queued or being written, and
// otherwise queues it behind them; either way frames leave in the order
// they were sent. It fails once a write has failed or the writer is
// closed.
func (fw *frameWriter) sendNow(f qframe) error {
	fw.mu.RLock()
	if fw.queued.Load() == 0 && fw.wmu.TryLock() {
		if fw.queued.Load() == 0 {
			err := fw.failed()
			if err == nil && fw.closed {
				err = errors.New("frame writer closed")
			}
			if err == nil {
				if err = f.write(fw.bw); err == nil {
					err = fw.bw.Flush()
				}
				if err != nil {
					fw.err.CompareAndSwap(nil, &err)
				}
			}
			fw.wmu.Unlock()
			fw.mu.RUnlock()
			if f.flushed != nil {
				close(f.flushed)
			}
			return err
		}
		fw.wmu.Unlock()
	}
	fw.mu.RUnlock()
	return fw.enqueue(f)
}

// send queues one frame. It fails once a write has failed or the writer is
// closed.
func (fw *frameWriter) send(kind byte, body []byte) error {
	return fw.sendRaw(encodeFrame(kind, body))
}

// encodeFrame returns the frame of kind with body.
func encodeFrame(kind byte, body []byte) []byte {
	buf := make([]byte, headerSize+1+len(body))
	binary.BigEndian.PutUint32(buf, uint32(1+len(body)))
	buf[headerSize] = kind
	copy(buf[headerSize+1:], body)
	return buf
}

// sendRaw sends one encoded frame (sendNow).
func (fw *frameWriter) sendRaw(frame []byte) error {
	return fw.sendNow(qframe{b: frame})
}

// sendSync sends one frame and waits until it has been written, so that it
// survives the process dying right after (logs stream this way).
func (fw *frameWriter) sendSync(kind byte, body []byte) error {
	f := qframe{b: encodeFrame(kind, body), flushed: make(chan struct{})}
	if err := fw.sendNow(f); err != nil {
		return err
	}
	<-f.flushed
	return fw.failed()
}

func (fw *frameWriter) failed() error {
	if p := fw.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (fw *frameWriter) enqueue(f qframe) error {
	fw.mu.RLock()
	defer fw.mu.RUnlock()
	if err := fw.failed(); err != nil {
		return err
	}
	if fw.closed {
		return errors.New("frame writer closed")
	}
	fw.queued.Add(1)
	fw.q <- f
	return nil
}

// close flushes what is queued and stops the writer.
func (fw *frameWriter) close() error {
	fw.mu.Lock()
	if !fw.closed {
		fw.closed = true
		close(fw.q)
	}
	fw.mu.Unlock()
	<-fw.done
	return fw.failed()
}

// The hot frames — tool calls and their results — have a binary envelope
// around the raw JSON, so that a 5 KB result is neither re-encoded nor
// re-validated on its way through:
//
//	call:   id uint64 | len(tool) uint16 | tool | args JSON
//	result: id uint64 | 0 | result JSON      (success)
//	        id uint64 | 1 | *sandbox.Error as JSON
//
// The broker validated the result's JSON already; the worker's engine parses
// it with its own bounded builder.

func encodeCall(id uint64, tool string, args []byte) ([]byte, error) {
	if len(tool) > 0xffff {
		return nil, errors.New("tool name too long")
	}
	n := 8 + 2 + len(tool) + len(args)
	buf := make([]byte, headerSize+1+n)
	binary.BigEndian.PutUint32(buf, uint32(1+n))
	buf[4] = kindCall
	b := buf[5:]
	binary.BigEndian.PutUint64(b, id)
	binary.BigEndian.PutUint16(b[8:], uint16(len(tool)))
	copy(b[10:], tool)
	copy(b[10+len(tool):], args)
	return buf, nil
}

func decodeCall(body []byte) (callMsg, error) {
	if len(body) < 10 {
		return callMsg{}, errors.New("short call frame")
	}
	id := binary.BigEndian.Uint64(body)
	tl := int(binary.BigEndian.Uint16(body[8:]))
	// An empty tool name is a well-formed call (a program may call
	// tools.call("")): the broker answers it with E_TOOL_UNKNOWN, as in
	// the in-process tier.
	if id == 0 || len(body) < 10+tl {
		return callMsg{}, errors.New("call frame without id, or shorter than its tool name")
	}
	return callMsg{ID: id, Tool: string(body[10 : 10+tl]), Args: body[10+tl:]}, nil
}

func encodeResult(id uint64, isErr bool, payload []byte) []byte {
	h := resultHeader(id, isErr, len(payload))
	return append(h[:], payload...)
}

// resultHeaderSize is the size of a result frame without its payload.
const resultHeaderSize = headerSize + 1 + 8 + 1

// resultHeader is the start of a result frame, up to its payload of n
// bytes.
func resultHeader(id uint64, isErr bool, n int) (h [resultHeaderSize]byte) {
	binary.BigEndian.PutUint32(h[:], uint32(1+8+1+n))
	h[4] = kindResult
	binary.BigEndian.PutUint64(h[5:], id)
	if isErr {
		h[13] = 1
	}
	return h
}

func decodeResult(body []byte) (id uint64, isErr bool, payload []byte, err error) {
	if len(body) < 9 || body[8] > 1 {
		return 0, false, nil, errors.New("malformed result frame")
	}
	return binary.BigEndian.Uint64(body), body[8] == 1, body[9:], nil
}
