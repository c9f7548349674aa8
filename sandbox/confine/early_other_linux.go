//go:build linux && !cgo

package confine

// earlyAvailable is false without cgo: there is no C constructor, and
// syscall.AllThreadsSyscall confines every thread in place instead.
const earlyAvailable = false

func earlyResult() (applied bool, err error, statusFD int) { return false, nil, -1 }

func earlyNS() (entered bool, err error) { return false, nil }
