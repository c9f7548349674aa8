package upstream

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// maxSecretBytes caps the output of a "!command" value.
const maxSecretBytes = 64 << 10

// secretCache holds the results of "!command" values, so that each command
// runs once per process.
var secretCache struct {
	mu sync.Mutex
	m  map[string]string
}

// HeaderValue resolves a header or env value: a value starting with "!" is a
// shell command (sh -c) run once per process, whose trimmed stdout is the
// value; anything else is returned as is. A failing command, or one that
// prints nothing, is an error (the caller names the server and field).
func HeaderValue(ctx context.Context, v string) (string, error) {
	if !strings.HasPrefix(v, "!") {
		return v, nil
	}
	cmd := strings.TrimSpace(v[1:])
	if cmd == "" {
		return "", fmt.Errorf(`empty command after "!"`)
	}
	secretCache.mu.Lock()
	defer secretCache.mu.Unlock()
	if out, ok := secretCache.m[cmd]; ok {
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 200 {
			msg = msg[:200]
		}
		if msg != "" {
			return "", fmt.Errorf("command failed: %v: %s", err, msg)
		}
		return "", fmt.Errorf("command failed: %v", err)
	}
	if stdout.Len() > maxSecretBytes {
		return "", fmt.Errorf("command printed more than %d bytes", maxSecretBytes)
	}
	out := strings.TrimSpace(stdout.String())
	if out == "" {
		return "", fmt.Errorf("command printed nothing")
	}
	if strings.ContainsAny(out, "\r\n\x00") {
		return "", fmt.Errorf("command output spans several lines")
	}
	if secretCache.m == nil {
		secretCache.m = map[string]string{}
	}
	secretCache.m[cmd] = out
	return out, nil
}

// resolve returns s with its "!command" header and env values run.
func (s *Server) resolve(ctx context.Context) (*Server, error) {
	r := *s
	var err error
	if r.Env, err = resolveMap(ctx, s, "env", s.Env); err != nil {
		return nil, err
	}
	if r.Headers, err = resolveMap(ctx, s, "headers", s.Headers); err != nil {
		return nil, err
	}
	return &r, nil
}

func resolveMap(ctx context.Context, s *Server, field string, m map[string]string) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !s.commands[field+"."+k] {
			out[k] = v
			continue
		}
		r, err := HeaderValue(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("invalid server %q: %s.%s: %w", s.Name, field, k, err)
		}
		out[k] = r
	}
	return out, nil
}
