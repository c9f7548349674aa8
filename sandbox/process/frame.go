package process

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A frame is a 4-byte big-endian length N followed by N bytes: one kind byte
// and a JSON body. Frames are capped per direction; a reader that meets a
// frame over its cap, or a truncated one, stops and the supervisor kills the
// worker (never the server).
const headerSize = 4

// Frame kinds.
const (
	// server → worker
	kindJob    byte = 'J' // body: jobMsg
	kindResult byte = 'R' // body: resultMsg, the answer to a kindCall
	kindHold   byte = 'H' // body: holdMsg, the job's wall clock stops (a person is asked) or runs again
	// worker → server
	kindReady   byte = 'Y' // body: readyMsg, the worker is warm and confined
	kindCall    byte = 'C' // body: callMsg, a tool call for the broker
	kindLog     byte = 'L' // body: logMsg, one console entry as it happens
	kindPartial byte = 'P' // body: partialMsg, a value stored with progress(value)
	kindOutcome byte = 'O' // body: outcomeMsg, the end of the job
)

// Frame size caps. A job carries at most a 256 KiB source or a 16 MiB module
// (base64 in JSON: ×4/3) plus its input; a result frame carries one tool
// result (the broker caps those at 4 MiB by default). Worker → server frames
// carry arguments, one log entry, one partial result or the outcome, all
// capped below: the largest is an outcome with a result kept whole for
// paging (sandbox.MaxKeptResultBytes, 8 MiB), its logs (sandbox.MaxKeptLogBytes:
// at most 5 MiB as JSON, a million one-byte entries `\` written `"\\",`;
// the engines escape control characters and frames are encoded without HTML
// escaping) and a partial result (256 KiB).
const (
	MaxServerFrame = 32 << 20
	MaxWorkerFrame = 16 << 20
)

var (
	errFrameTooLarge = errors.New("frame over its size cap")
	errFrameEmpty    = errors.New("empty frame")
)

// writeFrame writes one frame. It is not safe for concurrent use; callers
// serialize writes.
func writeFrame(w io.Writer, kind byte, body []byte) error {
	buf := make([]byte, headerSize+1+len(body))
	binary.BigEndian.PutUint32(buf, uint32(1+len(body)))
	buf[headerSize] = kind
	copy(buf[headerSize+1:], body)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame of at most max bytes.
func readFrame(r io.Reader, max int) (kind byte, body []byte, err error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if n == 0 {
		return 0, nil, errFrameEmpty
	}
	if uint64(n) > uint64(max) {
		return 0, nil, fmt.Errorf("%w: %d > %d bytes", errFrameTooLarge, n, max)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return buf[0], buf[1:], nil
}
