//go:build !linux

package process

func hugeHeap(int) {}
