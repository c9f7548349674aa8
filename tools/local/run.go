package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
	"github.com/sandcall/sandcall/tools/projfile"
)

// envAllow lists the only variables of the server's environment a script
// sees.
var envAllow = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"}

const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// script runs one tool's file.
type script struct {
	name   string
	path   string // absolute
	params []Param
	cfg    *Config
	sum    string // the SHA-256 of the content the tool was made from
}

// call runs the script once: args (validated, a JSON object) on stdin and
// in the environment, in its own process group, killed with it on timeout
// or cancellation.
func (s *script) call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	env, err := s.environ(args)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()

	cmd := exec.CommandContext(tctx, s.path)
	cmd.Dir = s.cfg.Root
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(args)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	killGroup := func() error { // only after Start: cmd.Process is set
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.Cancel = killGroup
	// A background child holding stdout open must not hold the call: once
	// the script has exited, its pipes are closed after WaitDelay.
	cmd.WaitDelay = time.Second
	stdout := &capWriter{max: s.cfg.MaxStdout}
	stderr := &capWriter{max: s.cfg.MaxStderr}
	overflow := make(chan struct{})
	var once sync.Once
	stdout.onOverflow = func() { once.Do(func() { close(overflow) }) }
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, tools.Failed("the script could not be started", "Check that the file is executable and its #! interpreter exists.")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-overflow:
		_ = killGroup()
		werr = <-done
	}
	_ = killGroup() // whatever the script left running in its group
	switch {
	case ctx.Err() != nil:
		return nil, sandbox.AsError(ctx.Err(), sandbox.ECancelled)
	case tctx.Err() != nil:
		e := tools.Transient(fmt.Sprintf("the script did not finish within %s and was killed", s.cfg.Timeout), "Ask for less work per call.")
		return nil, e
	case stdout.over:
		return nil, tools.ToolError(sandbox.EOutputLimit,
			fmt.Sprintf("the script wrote more than %d bytes to stdout and was killed", s.cfg.MaxStdout), "Ask for less data per call.")
	}
	var xe *exec.ExitError
	if errors.As(werr, &xe) {
		code := xe.ExitCode()
		msg := fmt.Sprintf("the script exited with code %d", code)
		if code < 0 {
			msg = "the script was killed by a signal"
		}
		e := strings.TrimSpace(stderr.text())
		if e != "" {
			msg += ": " + e
		}
		return nil, tools.Failed(msg, unsetVarHint(e, s.cfg.Env))
	}
	if werr != nil && !errors.Is(werr, exec.ErrWaitDelay) {
		return nil, tools.Failed("the script failed: "+werr.Error(), "")
	}
	return result(stdout.buf.Bytes(), stderr.text()), nil
}

// check reads the script as it is now and asks Config.Trust about its
// content: a script changed since it was trusted is refused, however its
// size and times look.
func (s *script) check() error {
	if s.cfg.Trust == nil {
		return nil
	}
	content, err := projfile.Read(s.path, MaxScriptBytes, s.cfg.Contain)
	if err != nil {
		return tools.Failed("the script cannot be read: "+readReason(err), "Tell the user; the script's file needs fixing.")
	}
	if err := s.cfg.Trust(s.path, projfile.Sum(content)); err != nil {
		return tools.ToolError(sandbox.EToolDenied, err.Error(), UntrustedHint)
	}
	return nil
}

// result shapes a successful call's output: stdout as JSON when it is
// JSON, else as a string; with stderr, the string stdout + "\n[stderr]\n" +
// stderr.
func result(out []byte, errText string) json.RawMessage {
	trimmed := bytes.TrimSpace(out)
	if errText == "" && len(trimmed) > 0 && json.Valid(trimmed) {
		var b bytes.Buffer
		if json.Compact(&b, trimmed) == nil {
			return b.Bytes()
		}
	}
	text := strings.TrimRight(string(out), "\r\n")
	if errText != "" {
		text += "\n[stderr]\n" + strings.TrimRight(errText, "\r\n")
	}
	b, _ := json.Marshal(strings.ToValidUTF8(text, "\uFFFD"))
	return b
}

// environ builds the script's environment: the allow-listed variables,
// SANDCALL_WORKDIR, SANDCALL_TOOL_NAME, and SANDCALL_PARAM_<NAME> and
// OCTOMIND_PARAM_<NAME> for each argument (strings raw, other values as
// JSON). A value holding a NUL byte cannot be an environment variable and
// is passed on stdin only.
func (s *script) environ(args json.RawMessage) ([]string, error) {
	env := make([]string, 0, len(envAllow)+4+2*len(s.params))
	for _, k := range envAllow {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		} else if k == "PATH" {
			env = append(env, "PATH="+defaultPath)
		}
	}
	for _, k := range s.cfg.Env {
		if v, ok := os.LookupEnv(k); ok && !slices.Contains(envAllow, k) {
			env = append(env, k+"="+v)
		}
	}
	// The .agents/tools convention's names beside sandcall's own: its
	// scripts start with cd "$OCTOMIND_WORKDIR" under set -u.
	env = append(env, "SANDCALL_WORKDIR="+s.cfg.Root, "SANDCALL_TOOL_NAME="+s.name,
		"OCTOMIND_WORKDIR="+s.cfg.Root, "OCTOMIND_TOOL_NAME="+s.name)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, tools.ArgError("", "the arguments are not a JSON object", "Pass the arguments as one JSON object.")
	}
	for _, p := range s.params { // declared names only: the schema is closed
		raw, ok := m[p.Name]
		if !ok {
			continue
		}
		v := string(raw)
		if p.Type == "string" {
			var str string
			if json.Unmarshal(raw, &str) == nil {
				v = str
			}
		}
		if strings.IndexByte(v, 0) >= 0 {
			continue
		}
		up := strings.ToUpper(p.Name)
		env = append(env, "SANDCALL_PARAM_"+up+"="+v, "OCTOMIND_PARAM_"+up+"="+v)
	}
	return env, nil
}

// capWriter keeps the first max bytes written to it and discards the rest.
type capWriter struct {
	max        int
	buf        bytes.Buffer
	over       bool
	onOverflow func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - w.buf.Len()
	if len(p) > room {
		if room > 0 {
			w.buf.Write(p[:room])
		}
		if !w.over {
			w.over = true
			if w.onOverflow != nil {
				w.onOverflow()
			}
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

// text returns what was kept, marked when some was discarded.
func (w *capWriter) text() string {
	s := w.buf.String()
	if w.over {
		s += "…[truncated]"
	}
	return s
}
