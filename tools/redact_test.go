package tools

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"Authorization: Bearer abcdefghijklmnop.qrs", "Authorization: Bearer [REDACTED]"},
		{"key sk-ant-api03-abcdefghijklmnopqrstu end", "key [REDACTED] end"},
		{"sk-proj-ABCDEFGHIJKLMNOPQRST", "[REDACTED]"},
		{"tok ghp_0123456789abcdefghijABCDEFGHIJ", "tok [REDACTED]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED]"},
		{"aws AKIAIOSFODNN7EXAMPLE done", "aws [REDACTED] done"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_nature-x", "jwt [REDACTED]"},
		{"url?token=abc123&x=1", "url?token=[REDACTED]&x=1"},
		{"password=hunter2 user=bob", "password=[REDACTED] user=bob"},
		{`{"api_key": "hunter22", "n": 1}`, `{"api_key": "[REDACTED]", "n": 1}`},
		{`{"client_secret":"x\"y"}`, `{"client_secret":"[REDACTED]"}`},
		{"max_tokens is 100", "max_tokens is 100"},
		{"sk-short", "sk-short"},
		{"ghost town", "ghost town"},
		{"a3f5e6d7c8b9a0f1e2d3c4b5a6f7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5", "a3f5e6d7c8b9a0f1e2d3c4b5a6f7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{"password":{"nested":1},"Token":"x","accessToken":"y","max_tokens":5}`, `{"Token":"[REDACTED]","accessToken":"[REDACTED]","max_tokens":5,"password":"[REDACTED]"}`},
		{`[{"note":"Bearer abcdefghijkl"}]`, `[{"note":"Bearer [REDACTED]"}]`},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
		{`not json password=x1`, `not json password=[REDACTED]`},
	} {
		if got := string(RedactJSON(json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("RedactJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRedactHandler(t *testing.T) {
	var b bytes.Buffer
	l := slog.New(NewRedactHandler(slog.NewJSONHandler(&b, nil))).With("auth", "Bearer abcdefghijkl")
	l.Info("key sk-0123456789abcdefghij", "err", errString("ghp_0123456789abcdefghijABCD"), slog.Group("g", "t", "AKIAIOSFODNN7EXAMPLE"), "n", 3)
	out := b.String()
	for _, s := range []string{"abcdefghijkl", "sk-0123", "ghp_", "AKIA"} {
		if strings.Contains(out, s) {
			t.Errorf("%q leaked: %s", s, out)
		}
	}
	if !strings.Contains(out, `"n":3`) {
		t.Errorf("lost a non-string attr: %s", out)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func BenchmarkRedactClean(b *testing.B) {
	s := `{"member_id":"m_0042","quarter":"Q3","category":"travel"}`
	for b.Loop() {
		_ = Redact(s)
	}
}
