//go:build !unix

package search_test

import "time"

// cpuTime is the CPU time the process has used: not read here.
func cpuTime() time.Duration { return 0 }
