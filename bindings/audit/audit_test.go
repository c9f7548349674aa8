package audit_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings/audit"
)

func TestReadStats(t *testing.T) {
	t.Parallel()
	st, err := audit.ReadStats(strings.NewReader(`{"event":"call","tool":"a","code":"","duration_ms":1}
{"event":"call","tool":"a","code":"E_TOOL_FAILED","duration_ms":3}
{"event":"call","tool":"a","code":"E_TOOL_DENIED","duration_ms":2}
not json
{"event":"run","code":"E_TIMEOUT"}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := st.Tools[0]
	if a.OK != 1 || a.Failed != 1 || a.Denied != 1 || a.P50MS != 2 || a.P95MS != 3 || st.Runs["E_TIMEOUT"] != 1 || st.Skipped != 1 {
		t.Errorf("%+v %+v", st, a)
	}
}

// A record written by NewLogger reads back: its event and fields, and
// secret shapes redacted.
func ExampleNewLogger() {
	var buf bytes.Buffer
	log := audit.NewLogger(&buf)
	log.Info("call", "tool", "send_mail", "code", "", "duration_ms", 4.0, "args", `{"key":"sk-live-0123456789abcdef0123"}`)
	st, _ := audit.ReadStats(&buf)
	fmt.Println(st.Records, st.Tools[0].Tool, st.Tools[0].OK)
	// Output: 1 send_mail 1
}

func TestNewLoggerRedacts(t *testing.T) {
	var buf bytes.Buffer
	audit.NewLogger(&buf).Info("call", "args", `{"key":"sk-live-0123456789abcdef0123"}`)
	if strings.Contains(buf.String(), "sk-live-0123") || !strings.Contains(buf.String(), `"event":"call"`) || !strings.Contains(buf.String(), `"ts":`) {
		t.Errorf("record: %s", buf.String())
	}
}
