package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces a secret in audit records, logs and approval prompts.
const Redacted = "[REDACTED]"

// secretShapes matches well-known secret shapes in free text: bearer
// credentials, OpenAI/Anthropic-style keys (sk-...), GitHub tokens
// (ghp_/gho_/ghu_/ghs_/ghr_, github_pat_), AWS access key IDs (AKIA/ASIA),
// JWTs, and key=value or "key": "value" pairs whose key names a secret.
var secretShapes = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(strings.Join([]string{
		`(?i)\b(bearer|basic)\s+[A-Za-z0-9\-._~+/]{8,}=*`,
		`\bsk-[A-Za-z0-9_\-]{16,}`,
		`\bgh[pousr]_[A-Za-z0-9]{20,}`,
		`\bgithub_pat_[A-Za-z0-9_]{20,}`,
		`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,
		`\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`,
		`(?i)"[a-z0-9_\-]*(?:password|passwd|secret|token|api_?key|authorization|private_?key)"\s*:\s*"(?:[^"\\]|\\.)*"`,
		`(?i)\b[a-z0-9_\-]*(?:password|passwd|secret|token|api_?key|private_?key)=[^\s&"',;]+`,
	}, "|"))
})

// The regular expressions of this file are compiled on first use: every
// start of the binary (each worker's too) would otherwise pay for them.
var (
	authScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(bearer|basic)\s`) })
	jsonPair   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^("[^"]*"\s*:\s*)"`) })
)

// Redact replaces every well-known secret shape in s (secretShapes, and AWS
// secret access keys: 40 characters of [A-Za-z0-9/+] mixing upper- and
// lower-case letters and digits) with [REDACTED],
// keeping enough context to read the line: "Bearer [REDACTED]",
// "password=[REDACTED]", "\"token\": \"[REDACTED]\"".
func Redact(s string) string {
	if len(s) >= 40 {
		s = awsSecretShape().ReplaceAllStringFunc(s, func(m string) string {
			if awsSecret(m) {
				return Redacted
			}
			return m
		})
	}
	if !maybeSecret(s) {
		return s
	}
	return secretShapes().ReplaceAllStringFunc(s, func(m string) string {
		if loc := authScheme().FindStringSubmatch(m); loc != nil {
			return loc[1] + " " + Redacted
		}
		if loc := jsonPair().FindStringSubmatch(m); loc != nil {
			return loc[1] + `"` + Redacted + `"`
		}
		if i := strings.IndexByte(m, '='); i > 0 && !strings.HasPrefix(m, "eyJ") {
			return m[:i+1] + Redacted
		}
		return Redacted
	})
}

// awsSecretShape finds runs of the alphabet of an AWS secret access key;
// awsSecret keeps those that are one: exactly 40 characters with upper- and
// lower-case letters and digits (a hex digest, all lower case, is not).
var awsSecretShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9/+]{40,}`) })

func awsSecret(m string) bool {
	if len(m) != 40 {
		return false
	}
	var up, low, digit bool
	for i := 0; i < len(m); i++ {
		switch c := m[i]; {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return up && low && digit
}

// maybeSecret is a cheap pre-filter: most strings hold none of the
// substrings every secret shape starts with or contains.
func maybeSecret(s string) bool {
	if len(s) < 8 {
		return false
	}
	for _, k := range [...]string{"sk-", "gh", "AKIA", "ASIA", "eyJ", "earer", "EARER", "asic", "ASIC",
		"ass", "ASS", "ecret", "ECRET", "oken", "OKEN", "key", "Key", "KEY"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// secretKey matches object keys whose values are secrets, whatever the value.
var secretKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(password|passwd|secret)|(token|api_?key|apikey|access_?key|authorization|private_?key|credentials?)$`)
})

// RedactJSON returns raw with the value of every key that names a secret
// (password, token, secret, api_key, ...) replaced by "[REDACTED]" and every
// string redacted as Redact does. Invalid JSON is redacted as text.
func RedactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(Redact(string(raw)))
	}
	b, err := json.Marshal(redactValue(v))
	if err != nil {
		return json.RawMessage(Redact(string(raw)))
	}
	return b
}

func redactValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretKey().MatchString(k) {
				x[k] = Redacted
				continue
			}
			x[k] = redactValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = redactValue(e)
		}
	case string:
		return Redact(x)
	}
	return v
}

// RedactHandler wraps a slog.Handler so that no record it writes carries a
// well-known secret shape, nor a character a person reading it cannot see:
// the message and every string attribute go through Redact and Visible. sandcall's audit trail and logs are written through it.
type RedactHandler struct{ h slog.Handler }

var _ slog.Handler = RedactHandler{}

// NewRedactHandler returns h with redaction.
func NewRedactHandler(h slog.Handler) RedactHandler { return RedactHandler{h} }

// Enabled implements slog.Handler.
func (r RedactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (r RedactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Visible(Redact(rec.Message)), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (r RedactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := make([]slog.Attr, len(as))
	for i, a := range as {
		c[i] = redactAttr(a)
	}
	return RedactHandler{r.h.WithAttrs(c)}
}

// WithGroup implements slog.Handler.
func (r RedactHandler) WithGroup(name string) slog.Handler { return RedactHandler{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Visible(Redact(v.String())))
	case slog.KindGroup:
		g := v.Group()
		c := make([]slog.Attr, len(g))
		for i, e := range g {
			c[i] = redactAttr(e)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(c...)}
	case slog.KindAny:
		if e, ok := v.Any().(error); ok {
			return slog.String(a.Key, Visible(Redact(e.Error())))
		}
		return slog.String(a.Key, Visible(Redact(v.String())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
