//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package local

import "syscall"

func ctimeOf(s *syscall.Stat_t) int64 { return s.Ctimespec.Nano() }
