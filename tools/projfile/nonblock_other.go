//go:build !unix

package projfile

const nonBlock = 0
