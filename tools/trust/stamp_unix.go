//go:build unix

package trust

import (
	"os"
	"syscall"
)

func stampOf(fi os.FileInfo) stamp {
	st := stamp{size: fi.Size(), mtime: fi.ModTime()}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(s.Ino)
	}
	return st
}
