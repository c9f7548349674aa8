package js

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandcall/sandcall/internal/testenv"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/internal/txtar"
)

// caseSpec is one data-driven case: testdata/*.txtar. The comment holds
// "key: value" lines:
//
//	expect: E_CODE[|E_CODE...] or ok
//	result: compact JSON the run must return (with expect: ok)
//	next: compact JSON the program next.js must return when run after it
//	logs_truncated: true
//	log0: the first log entry
//	skip: why the case cannot run in-process
//	timeout, memory_bytes, max_calls, max_log_bytes, max_result_bytes,
//	max_source_bytes, max_stack_frames: limits for the run
//
// Files: program.js (required), input.json, next.js.
type caseSpec struct {
	keys  map[string]string
	files map[string]string
}

func loadCase(t *testing.T, path string) caseSpec {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := txtar.Parse(string(data))
	c := caseSpec{keys: map[string]string{}, files: a.Files}
	for _, line := range strings.Split(a.Comment, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			c.keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return c
}

func (c caseSpec) limits(t *testing.T) sandbox.Limits {
	l := sandbox.DefaultLimits()
	l.Timeout = 2 * time.Second
	for k, v := range c.keys {
		if k == "timeout" {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatal(err)
			}
			l.Timeout = d
			continue
		}
		n, err := strconv.Atoi(v)
		fields := map[string]*int{
			"max_calls": &l.MaxCalls, "max_log_bytes": &l.MaxLogBytes, "max_result_bytes": &l.MaxResultBytes,
			"max_source_bytes": &l.MaxSourceBytes, "max_stack_frames": &l.MaxStackFrames, "max_in_flight": &l.MaxInFlight,
		}
		if p, ok := fields[k]; ok {
			if err != nil {
				t.Fatal(err)
			}
			*p = n
		}
		if k == "memory_bytes" {
			l.MemoryBytes = int64(n)
		}
	}
	if testenv.Race && !strings.Contains(c.keys["expect"], "E_TIMEOUT") {
		l.Timeout *= 10
	}
	return l
}

// checkOutcome asserts an outcome against "ok", "ok:JSON" or "E_A|E_B".
func checkOutcome(t *testing.T, out *sandbox.Outcome, expect, result string) {
	t.Helper()
	if strings.HasPrefix(expect, "ok") {
		if out.Err != nil {
			t.Fatalf("want success, got %v (hint %q)", out.Err, out.Err.Hint)
		}
		if v, ok := strings.CutPrefix(expect, "ok:"); ok {
			result = v
		}
		if result != "" && !bytes.Equal(out.Value, []byte(result)) {
			t.Fatalf("result = %s, want %s", out.Value, result)
		}
		return
	}
	if out.Err == nil {
		t.Fatalf("want %s, got success %s", expect, out.Value)
	}
	for _, code := range strings.Split(expect, "|") {
		if string(out.Err.Code) == strings.TrimSpace(code) {
			checkMessage(t, out.Err)
			return
		}
	}
	t.Fatalf("got %v (hint %q), want %s", out.Err, out.Err.Hint, expect)
}

// checkMessage asserts what every error message promises: capped, no Go
// stack, no host path.
func checkMessage(t *testing.T, err *sandbox.Error) {
	t.Helper()
	if len(err.Message) > sandbox.MaxMessageBytes || len(err.Hint) > sandbox.MaxMessageBytes {
		t.Errorf("message or hint over %d bytes", sandbox.MaxMessageBytes)
	}
	for _, bad := range []string{"goroutine ", ".go:", "github.com/", "/work/", "/root/"} {
		if strings.Contains(err.Message, bad) || strings.Contains(err.Hint, bad) {
			t.Errorf("message leaks %q: %s", bad, err.Message)
		}
	}
}

func TestCases(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatal("no cases", err)
	}
	e := New(Config{})
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			c := loadCase(t, path)
			if why := c.keys["skip"]; why != "" {
				t.Skip(why)
			}
			src, ok := c.files["program.js"]
			if !ok {
				t.Fatal("no program.js")
			}
			job := &sandbox.Job{
				Program: sandbox.Program{Source: src, Input: []byte(strings.TrimSpace(c.files["input.json"]))},
				Limits:  c.limits(t),
				Tools:   testTools,
			}
			out := e.Execute(context.Background(), job, newHost())
			checkOutcome(t, out, c.keys["expect"], c.keys["result"])
			if c.keys["logs_truncated"] == "true" && !out.LogsTruncated {
				t.Errorf("LogsTruncated = false, want true")
			}
			if want, ok := c.keys["log0"]; ok && (len(out.Logs) == 0 || out.Logs[0] != want) {
				t.Errorf("logs = %q, want first %q", out.Logs, want)
			}
			if next, ok := c.files["next.js"]; ok {
				job := &sandbox.Job{Program: sandbox.Program{Source: next}, Limits: c.limits(t), Tools: testTools}
				out := e.Execute(context.Background(), job, newHost())
				checkOutcome(t, out, "ok", c.keys["next"])
			}
		})
	}
}
