// Package projfile reads a project's files the way sandcall must read what
// a repository holds: bounded in size, only regular files (never a device,
// FIFO or socket, which may block or never end), and, for a file of the
// project, never through a symbolic link that leaves the project. Every
// read ends, with an error or the bytes, in the time it takes to read at
// most the cap.
//
// A checkout is written by whoever can push to it: a .mcp.json that is a
// link to /dev/zero, a FIFO named sandcall.yaml or a config that is a link
// to ~/.ssh/id_ed25519 must cost nothing and reveal nothing. Read and Hash
// open without following the path into a blocking open (O_NONBLOCK), check
// what was opened (fstat), and read at most the cap.
//
// WriteAtomic replaces a file so that a reader sees the old content or the
// new, never a part.
package projfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Errors of Read and Hash, wrapped with the path.
var (
	// ErrNotRegular: the path is a device, FIFO, socket or directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the cap.
	ErrTooLarge = errors.New("larger than the limit")
	// ErrOutside: the path, its links followed, leaves the project.
	ErrOutside = errors.New("a link leading outside the project")
)

// Error is a file that was not read: the path as given and why.
type Error struct {
	Path string
	Err  error // ErrNotRegular, ErrTooLarge, ErrOutside or an os error
	Max  int64 // the cap, for ErrTooLarge
}

func (e *Error) Error() string {
	switch {
	case errors.Is(e.Err, ErrTooLarge):
		return fmt.Sprintf("%s: larger than %d bytes: not read", e.Path, e.Max)
	case errors.Is(e.Err, ErrNotRegular):
		return e.Path + ": not a regular file (a device, FIFO, socket or directory): not read"
	case errors.Is(e.Err, ErrOutside):
		return e.Path + ": a symbolic link leading outside the project: not read"
	}
	var pe *os.PathError
	if errors.As(e.Err, &pe) {
		return e.Path + ": " + pe.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Read returns the content of the file at path, of at most max bytes. If
// root is not empty, path (its links followed) must lie inside root.
func Read(path string, max int64, root string) ([]byte, error) {
	f, size, err := open(path, max, root)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, min(size, max)+1)
	buf := make([]byte, 32<<10)
	for int64(len(b)) <= max {
		n, err := f.Read(buf[:min(int64(len(buf)), max+1-int64(len(b)))])
		b = append(b, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &Error{Path: path, Err: err}
		}
	}
	if int64(len(b)) > max { // it grew while read
		return nil, &Error{Path: path, Err: ErrTooLarge, Max: max}
	}
	return b, nil
}

// Hash returns the SHA-256, in hex, of the file at path, read as Read
// reads it.
func Hash(path string, max int64, root string) (string, error) {
	f, _, err := open(path, max, root)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, max+1))
	if err != nil {
		return "", &Error{Path: path, Err: err}
	}
	if n > max {
		return "", &Error{Path: path, Err: ErrTooLarge, Max: max}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Sum is the SHA-256 of b in hex, as Hash gives it for a file.
func Sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// open opens path for reading after the checks of Read; size is the
// file's size when opened.
func open(path string, max int64, root string) (*os.File, int64, error) {
	if root != "" {
		if _, ok, err := Inside(root, path); err != nil {
			return nil, 0, &Error{Path: path, Err: err}
		} else if !ok {
			return nil, 0, &Error{Path: path, Err: ErrOutside}
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, 0, &Error{Path: path, Err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, &Error{Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &Error{Path: path, Err: ErrNotRegular}
	}
	if fi.Size() > max {
		f.Close()
		return nil, 0, &Error{Path: path, Err: ErrTooLarge, Max: max}
	}
	return f, fi.Size(), nil
}

// Canonical is the absolute path of dir with every symbolic link
// resolved: the name a project is known by.
func Canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Inside resolves path (relative to the working directory), following
// every link, and reports whether it lies inside root (also resolved),
// with the resolved path. A path that does not exist is an error.
func Inside(root, path string) (resolved string, ok bool, err error) {
	r, err := Canonical(root)
	if err != nil {
		return "", false, err
	}
	resolved, err = Canonical(path)
	if err != nil {
		return "", false, err
	}
	return resolved, Within(r, resolved), nil
}

// Within reports whether the clean absolute path p is root or lies below
// it (no link resolved: see Inside).
func Within(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// Rel is path relative to root, with forward slashes, when it lies inside
// root (both made absolute; if not inside as written, with the links of
// root and of path's directory resolved); else path itself, clean.
func Rel(root, path string) string {
	ar, err1 := filepath.Abs(root)
	ap, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(filepath.Clean(path))
	}
	if Within(ar, ap) {
		if r, err := filepath.Rel(ar, ap); err == nil {
			return filepath.ToSlash(r)
		}
	}
	cr, err1 := filepath.EvalSymlinks(ar)
	cd, err2 := filepath.EvalSymlinks(filepath.Dir(ap))
	if err1 == nil && err2 == nil {
		cp := filepath.Join(cd, filepath.Base(ap))
		if Within(cr, cp) {
			if r, err := filepath.Rel(cr, cp); err == nil {
				return filepath.ToSlash(r)
			}
		}
	}
	return filepath.ToSlash(filepath.Clean(ap))
}

// WriteAtomic replaces path with data: it writes a temporary file in the
// same directory, syncs it, gives it mode perm and renames it over path,
// then syncs the directory, so that a reader (or a crash) sees the old
// file or the new one, never a part. A symbolic link at path is followed:
// its target is replaced.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
