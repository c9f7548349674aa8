package cli

import (
	"debug/buildinfo"
	"strings"
	"testing"
)

// The real binary starts each worker once: without cgo Landlock reaches
// every thread through AllThreadsSyscall, with cgo through the C
// constructor; `sandcall doctor` names the way, and neither is the re-exec.
func TestDoctorLandlockWithoutReexec(t *testing.T) {
	t.Parallel()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	cgo := false
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value == "1" {
			cgo = true
		}
	}
	out, stderr, code := sandcall(t, "", "doctor")
	if code != 0 {
		t.Fatalf("doctor exited %d: %s", code, stderr)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "landlock ") {
			line = l
		}
	}
	if strings.Contains(line, "skipped") {
		t.Skipf("no Landlock here: %s", line)
	}
	want := "AllThreadsSyscall"
	if cgo {
		want = "C constructor before the Go runtime starts"
	}
	if !strings.Contains(line, want) || strings.Contains(line, "via re-exec") {
		t.Errorf("cgo=%v: doctor's Landlock line %q, want it to name %q and no re-exec", cgo, line, want)
	}
	if _, stderr, code := sandcall(t, "return 1", "run", "-"); code != 0 {
		t.Errorf("a run in the process tier failed (%d): %s", code, stderr)
	}
}
