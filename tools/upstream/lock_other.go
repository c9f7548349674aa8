//go:build !unix

package upstream

// lockFile is a no-op where flock is not available: writers of the pin file
// in several processes at once may then lose a pin (it is pinned again at
// the next sight).
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
