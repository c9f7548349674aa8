package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// npmMu serializes npm installs among this binary's parallel tests; the
// lock file (flock) serializes them with other test binaries running
// beside it (a second `go test` of the package, another package's tests).
var npmMu sync.Mutex

// npmInstall makes dir (a directory of the system's temp dir, keyed by
// the versions it holds) hold `npm install args...` once, and returns
// without running npm when installed() says it already does. The install
// goes to a temp dir renamed into place, under a lock: a test never sees a
// half-written dir, and never has the dir it uses removed under it by
// another test installing the same packages. It skips the test when npm
// or the registry is unavailable.
func npmInstall(t *testing.T, dir string, installed func() bool, args ...string) {
	t.Helper()
	if installed() {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("skipped: npm is not installed")
	}
	npmMu.Lock()
	defer npmMu.Unlock()
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if installed() { // installed by whoever held the lock before
		return
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--no-audit", "--no-fund", "--no-package-lock"}, args...)...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("skipped: npm install %v failed (no registry access?): %v\n%s", args, err, out)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
}
