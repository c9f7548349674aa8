//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package local

import "os"

func stampOf(fi os.FileInfo) stamp {
	return stamp{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}
}
