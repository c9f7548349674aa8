package expense_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/sandcall/sandcall/examples/expense"
)

// cBuild is the C guest's build (see c/expense.c and modules.go), and the
// clang release the committed module was built with: another release
// compiles the same source to other bytes.
var (
	cBuild = []string{"--target=wasm32-wasi", "-O2", "-nostartfiles", "-Wl,--no-entry", "-Wl,--strip-all"}
	cClang = "14.0.6"
)

// TestModuleCMatchesSource rebuilds the C guest with the installed clang
// and wasi-libc and compares it with the committed ModuleC.
func TestModuleCMatchesSource(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("skipped: no clang (apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)")
	}
	v, _ := exec.Command(clang, "--version").Output()
	if m := regexp.MustCompile(`clang version (\S+)`).FindSubmatch(v); m == nil || !bytes.HasPrefix(m[1], []byte(cClang)) {
		t.Skipf("skipped: ModuleC was built with clang %s; this is %q", cClang, bytes.TrimSpace(v))
	}
	out := filepath.Join(t.TempDir(), "expense.wasm")
	cmd := exec.Command(clang, append(cBuild, "-o", out, "c/expense.c")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("skipped: clang cannot build for wasm32-wasi here (wasi-libc, lld, libclang-rt-14-dev-wasm32?): %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, expense.ModuleC) {
		t.Errorf("c/expense.wasm (%d bytes) is not the build of c/expense.c (%d bytes): run go generate ./examples/expense", len(expense.ModuleC), len(b))
	}
}
