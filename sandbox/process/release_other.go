//go:build !linux

package process

func codeRanges() [][2]uintptr { return nil }

func dropPages([][2]uintptr) {}
