//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package local

import (
	"os"
	"syscall"
)

func stampOf(fi os.FileInfo) stamp {
	st := stamp{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(s.Ino)
		st.ctime = ctimeOf(s)
	}
	return st
}
