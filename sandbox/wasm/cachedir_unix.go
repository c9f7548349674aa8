//go:build unix

package wasm

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkCacheDir makes sure dir is a directory this process's user owns and
// no one else can write, creating it (0700) if missing, and that every
// entry already in it (wazero keeps one subdirectory per version) is too.
// It returns the absolute path.
func checkCacheDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("wasm: cache dir: %w", err)
	}
	if _, err := os.Lstat(abs); os.IsNotExist(err) {
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return "", fmt.Errorf("wasm: cache dir: %w", err)
		}
	}
	uid := os.Geteuid()
	check := func(path string, fi fs.FileInfo) error {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("wasm: cache dir: %s is a symlink", path)
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			return fmt.Errorf("wasm: cache dir: %s is not a regular file or directory", path)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != uid {
			return fmt.Errorf("wasm: cache dir: %s is not owned by this user (uid %d)", path, uid)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("wasm: cache dir: %s is writable by group or others (mode %v)", path, fi.Mode().Perm())
		}
		return nil
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", fmt.Errorf("wasm: cache dir: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("wasm: cache dir: %s is not a directory", abs)
	}
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		return check(path, info)
	})
	if err != nil {
		return "", err
	}
	return abs, nil
}
