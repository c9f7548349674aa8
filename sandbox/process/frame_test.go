package process

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

func TestFrameRoundTrip(t *testing.T) {
	var b bytes.Buffer
	for _, body := range []string{"", "{}", `{"a":"` + string(bytes.Repeat([]byte("x"), 1<<16)) + `"}`} {
		if err := writeFrame(&b, kindCall, []byte(body)); err != nil {
			t.Fatal(err)
		}
		k, got, err := readFrame(&b, MaxWorkerFrame)
		if err != nil || k != kindCall || string(got) != body {
			t.Fatalf("round trip: kind %q, %d bytes, %v", k, len(got), err)
		}
	}
}

func TestFrameErrors(t *testing.T) {
	big := make([]byte, 4)
	binary.BigEndian.PutUint32(big, MaxWorkerFrame+1)
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty stream", nil, io.EOF},
		{"short header", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"zero length", []byte{0, 0, 0, 0}, errFrameEmpty},
		{"over cap", big, errFrameTooLarge},
		{"truncated body", []byte{0, 0, 0, 9, 'C', '{'}, io.ErrUnexpectedEOF},
	} {
		_, _, err := readFrame(bytes.NewReader(tc.in), MaxWorkerFrame)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// FuzzReadFrame feeds arbitrary bytes to the frame decoder and the message
// decoders behind it: they must never panic or allocate past the cap.
func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	call, _ := encodeCall(1, "ping", []byte(`{"n":1}`))
	b.Write(call)
	b.Write(encodeResult(1, false, []byte(`2`)))
	_ = writeFrame(&b, kindLog, []byte(`{"entry":"hi"}`))
	_ = writeFrame(&b, kindOutcome, []byte(`{"value":[1,2],"err":null}`))
	f.Add(b.Bytes())
	f.Add([]byte{0, 0, 0, 1, 'Y'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for i := 0; i < 16; i++ {
			k, body, err := readFrame(r, 1<<16)
			if err != nil {
				return
			}
			if len(body) >= 1<<16 {
				t.Fatalf("body of %d bytes passed a 64 KiB cap", len(body))
			}
			_, _ = decodeWorkerMessage(k, body)
			_, _, _, _ = decodeResult(body)
		}
	})
}

// TestJobFrame: a job crosses with its module's bytes as they are, after
// its JSON; a frame whose JSON length runs past its end, or too short for
// one, is refused.
func TestJobFrame(t *testing.T) {
	for _, mod := range [][]byte{nil, []byte("\x00asm\x01\x00\x00\x00 and more")} {
		job := &sandbox.Job{RunID: "r", Program: sandbox.Program{Language: sandbox.WASM, Module: mod, Input: json.RawMessage(`{"a":1}`)}}
		body, err := encodeJob(job)
		if err != nil {
			t.Fatal(err)
		}
		if len(mod) > 0 && !bytes.HasSuffix(body, mod) {
			t.Errorf("the module is not the frame's tail as it is")
		}
		got, err := decodeJob(body)
		if err != nil {
			t.Fatal(err)
		}
		if got.RunID != "r" || !bytes.Equal(got.Program.Module, mod) || string(got.Program.Input) != `{"a":1}` {
			t.Errorf("round trip: %+v", got)
		}
		if job.Program.Module == nil && mod != nil {
			t.Error("encodeJob changed the job")
		}
	}
	for _, bad := range []string{"", "\x00\x00", "\x00\x00\x00\x09{}"} {
		if _, err := decodeJob([]byte(bad)); err == nil {
			t.Errorf("decodeJob(%q): no error", bad)
		}
	}
}
