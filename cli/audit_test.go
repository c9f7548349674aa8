package cli

import (
	"strings"
	"testing"
)

func TestAuditStatsText(t *testing.T) {
	t.Parallel()
	st, err := readAuditStats(strings.NewReader(`{"event":"call","tool":"a","code":"","duration_ms":1}
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
