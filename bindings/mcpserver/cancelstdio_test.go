package mcpserver

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

type closeBuffer struct{ bytes.Buffer }

func (*closeBuffer) Close() error { return nil }

// TestStdioCancelFilter: a response to a request the client cancelled is
// dropped once; other responses, and cancellations inside over-long lines,
// are not touched.
func TestStdioCancelFilter(t *testing.T) {
	f := &stdioCancelFilter{cancelled: map[string]bool{}}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s","pad":"` + strings.Repeat("x", maxCancelLine) + `"}}`,
		"",
	}, "\n")
	r := &cancelReader{ReadCloser: io.NopCloser(strings.NewReader(in)), f: f}
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	out := &closeBuffer{}
	w := &cancelWriter{WriteCloser: out, f: f}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",   // cancelled: dropped
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n",   // forgotten after one drop
		`{"jsonrpc":"2.0","id":"s","result":{}}` + "\n", // its cancellation was too long to read
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
	} {
		if n, err := w.Write([]byte(msg)); err != nil || n != len(msg) {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if got := strings.Count(out.String(), "\n"); got != 3 {
		t.Errorf("%d responses written, want 3:\n%s", got, out.String())
	}
}
