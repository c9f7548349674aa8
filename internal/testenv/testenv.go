// Package testenv holds what the module's tests share: whether the race
// detector is on (Race), the sandcall binary built once per state of the
// tree (Binary), and the npm gate that installs a test's packages or skips
// it (NPMInstall). It is for tests only.
package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Race reports whether the race detector is on; it slows goja, wazero's
// compiler and interpreter about tenfold, which some tests allow for.
const Race = race

// Root returns the module's root directory: the nearest directory above
// the working directory that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("testenv: no go.mod above the working directory")
		}
		dir = up
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary returns the path of the sandcall binary (cmd/sandcall) built from
// the tree the test runs in. It is built at most once per state of the
// tree: into a directory of the system's temp dir named after a hash of
// every file a build reads (the module's files but tests, testdata,
// node_modules and .git), under a file lock, so that the test binaries of
// one `go test ./...` share one build. Directories of other states older
// than a day are removed.
func Binary() (string, error) {
	binOnce.Do(func() { binPath, binErr = build() })
	return binPath, binErr
}

func build() (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	key, err := treeKey(root)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), "sandcall-testbin")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(base, "lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	bin := filepath.Join(base, key, "sandcall")
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	removeStale(base, key)
	tmp, err := os.MkdirTemp(base, key+"-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "build", "-o", filepath.Join(tmp, "sandcall"), "./cmd/sandcall")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testenv: building sandcall: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, filepath.Join(base, key)); err != nil {
		return "", err
	}
	return bin, nil
}

// treeKey hashes what a build of the tree reads, and the toolchain.
func treeKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s cgo=%s goflags=%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		os.Getenv("CGO_ENABLED"), os.Getenv("GOFLAGS"))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// removeStale removes the build directories other than keep not touched
// for a day.
func removeStale(base, keep string) {
	des, _ := os.ReadDir(base)
	for _, de := range des {
		if !de.IsDir() || de.Name() == keep {
			continue
		}
		if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(filepath.Join(base, de.Name()))
		}
	}
}

// lockFile takes an exclusive flock on path, waiting for it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

var (
	demoOnce sync.Once
	demoPath string
	demoErr  error
)

// DemoServer returns the path of a copy of Binary named demo-server, for
// tests that attach `serve --demo` as an upstream server: sandcall never
// starts an entry that runs sandcall itself (an executable of that name),
// so an upstream must have another name.
func DemoServer() (string, error) {
	demoOnce.Do(func() {
		bin, err := Binary()
		if err != nil {
			demoPath, demoErr = "", err
			return
		}
		unlock, err := lockFile(filepath.Join(filepath.Dir(filepath.Dir(bin)), "lock"))
		if err != nil {
			demoErr = err
			return
		}
		defer unlock()
		demoPath = filepath.Join(filepath.Dir(bin), "demo-server")
		if fi, err := os.Stat(demoPath); err == nil && fi.Mode().IsRegular() {
			return
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			demoErr = err
			return
		}
		tmp := demoPath + ".tmp"
		if err := os.WriteFile(tmp, b, 0o755); err != nil {
			demoErr = err
			return
		}
		demoErr = os.Rename(tmp, demoPath)
	})
	return demoPath, demoErr
}

var npmMu sync.Mutex

// NPMInstall makes dir (a directory of the system's temp dir, named after
// the packages and versions it holds) hold `npm install args...` once, and
// returns without running npm when installed() says it already does. The
// install goes to a temp dir renamed into place, under a lock (a mutex
// within the test binary, a flock across binaries): a test never sees a
// half-written dir, nor has the dir it uses removed under it by another
// test installing the same packages. It skips the test when npm or the
// registry is unavailable, saying which.
func NPMInstall(t testing.TB, dir string, installed func() bool, args ...string) {
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
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
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

// Workload returns the text of a standard workload's file under examples/
// (say "expense/program.js"), so that tests and benchmarks run the
// programs the demos run rather than copies of them.
func Workload(tb testing.TB, name string) string {
	tb.Helper()
	root, err := Root()
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", filepath.FromSlash(name)))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
