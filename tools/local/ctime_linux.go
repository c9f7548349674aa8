//go:build linux

package local

import "syscall"

func ctimeOf(s *syscall.Stat_t) int64 { return s.Ctim.Nano() }
