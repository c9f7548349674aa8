//go:build unix

package projfile

import "syscall"

// nonBlock keeps open from blocking on a FIFO with no writer.
const nonBlock = syscall.O_NONBLOCK
