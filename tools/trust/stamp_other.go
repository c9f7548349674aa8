//go:build !unix

package trust

import "os"

func stampOf(fi os.FileInfo) stamp { return stamp{size: fi.Size(), mtime: fi.ModTime()} }
