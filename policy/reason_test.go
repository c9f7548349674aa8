package policy

import "testing"

// TestAllowedByFallbackReasons: the reasons built once are the ones Decide
// wrote per call, for every caller and fallback rule id.
func TestAllowedByFallbackReasons(t *testing.T) {
	for _, c := range []string{Direct, Code} {
		for _, id := range []string{"defaults", "tool.allowed_callers", "default", "default.destructive_direct_only", "other"} {
			want := "caller " + c + " allowed (" + reasonOfFallback(id) + ")"
			if got := allowedByFallback(callerBit(c), id); got != want {
				t.Errorf("%s, %s: got %q, want %q", c, id, got, want)
			}
		}
	}
}
