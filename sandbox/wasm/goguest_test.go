package wasm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
)

var (
	goGuestOnce sync.Once
	goGuestWasm []byte
	goGuestErr  string
)

// goGuest builds testdata/goguest with the installed Go for wasip1, once.
func goGuest(t testing.TB) []byte {
	goGuestOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			goGuestErr = "go not installed"
			return
		}
		dir, err := os.MkdirTemp("", "goguest")
		if err != nil {
			goGuestErr = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "g.wasm")
		cmd := exec.Command(gobin, "build", "-o", out, "./testdata/goguest")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			goGuestErr = "go build: " + err.Error() + "\n" + string(b)
			return
		}
		goGuestWasm, _ = os.ReadFile(out)
	})
	if goGuestWasm == nil {
		t.Skip(goGuestErr)
	}
	return goGuestWasm
}

func TestGoGuest(t *testing.T) {
	mod := goGuest(t)
	for name, e := range engines(t) {
		t.Run(name, func(t *testing.T) {
			if name == "compiler" && testenv.Race {
				// Race-instrumented, wazero's compiler took over the 60 s
				// limit on this Go module on 2 loaded cores: the run would
				// end at the limit, not at a bug. It runs without -race.
				t.Skip("-race: compiling a Go guest takes over a minute instrumented")
			}
			o := e.Execute(context.Background(), job(mod, `{"n":41}`, sandbox.Limits{Timeout: sandbox.MaxTimeout}), newHost())
			if o.Err != nil || string(o.Value) != `{"result":42,"status":0}` {
				t.Fatalf("got %s, %v (logs %q)", o.Value, o.Err, o.Logs)
			}
			if len(o.Logs) != 1 || o.Logs[0] != "status 0" {
				t.Errorf("logs = %q", o.Logs)
			}
		})
	}
}
