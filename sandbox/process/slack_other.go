//go:build !linux

package process

import "os/exec"

// startCmd starts cmd (the timer slack of slack_linux.go is Linux's).
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
