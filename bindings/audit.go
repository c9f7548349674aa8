package bindings

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/tools"
)

type auditCall struct {
	logArgs     bool
	seq         int
	attempt     int    // 1 unless the call was retried
	alias       string // the deprecated name the call used, if any
	omitted     int    // items left out of a cut result
	tool        string
	known       bool
	decision    string
	rule        string
	args        json.RawMessage
	resultBytes int
	dur         time.Duration
	err         *sandbox.Error
	rawError    bool // a DirectRaw tool's MCP result, served as is, had isError set

	// flow is the flow a rule that reads labels named (Decision.Flow).
	flow string
}

// rawIsError reports whether res, the JSON of an MCP CallToolResult that a
// DirectRaw tool returns to a direct caller, has isError set.
func rawIsError(res json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
}

func (r *run) finishCall(a auditCall) {
	o := outOK
	if a.err != nil {
		o = outFailed
		if a.err.Code == sandbox.EToolDenied {
			o = outDenied
		}
	}
	r.mu.Lock()
	r.stats.Total++
	switch o {
	case outOK:
		r.stats.OK++
	case outFailed:
		r.stats.Failed++
	case outDenied:
		r.stats.Denied++
	}
	if a.known {
		r.stats.ByTool[a.tool]++
	}
	r.mu.Unlock()

	if r.b.cfg.Observer != nil {
		tool := a.tool
		if !a.known {
			tool = "(unknown)"
		}
		r.b.cfg.Observer.ObserveCall(tool, string(r.caller), [...]string{"ok", "failed", "denied"}[o], a.dur)
	}
	r.auditRecord(a)
}

// auditRecord writes the audit record of a call, or of one failed attempt
// of a call that is retried.
func (r *run) auditRecord(a auditCall) {
	if !r.b.cfg.Audit.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	code := ""
	if a.err != nil && a.decision != "suspended" {
		// A suspended call waits for a person's answer: the E_CANCELLED
		// that ends its run is how suspension works, not its outcome.
		code = string(a.err.Code)
	}
	attrs := make([]slog.Attr, 0, 17)
	attrs = append(attrs,
		slog.String("run_id", r.id),
		slog.Int("seq", a.seq),
		slog.String("caller", string(r.caller)),
		slog.String("principal", r.principal.ID),
		slog.String("tool", a.tool),
		slog.String("decision", a.decision),
		slog.String("rule", a.rule),
		slog.String("code", code),
		slog.Float64("duration_ms", ms(a.dur)),
		slog.String("args_sha256", hashArgs(a.args)),
		slog.Int("result_bytes", a.resultBytes),
		slog.String("tier", r.tier),
		slog.Int("attempt", a.attempt),
	)
	if a.alias != "" {
		attrs = append(attrs, slog.String("alias", a.alias))
	}
	if a.omitted > 0 {
		attrs = append(attrs, slog.Int("omitted", a.omitted))
	}
	if a.flow != "" {
		attrs = append(attrs, slog.String("flow", sandbox.Cap(a.flow, MaxLoggedArgsBytes)))
	}
	if a.logArgs && a.args != nil {
		attrs = append(attrs, slog.String("args", sandbox.Cap(string(tools.RedactJSON(a.args)), MaxLoggedArgsBytes)))
	}
	r.b.cfg.Audit.LogAttrs(context.Background(), slog.LevelInfo, "call", attrs...)
}

// MaxLoggedArgsBytes caps the args field of an audit record (log_args).
const MaxLoggedArgsBytes = 4 << 10

func hashArgs(args json.RawMessage) string {
	if args == nil {
		return ""
	}
	h := sha256.Sum256(args)
	return hex.EncodeToString(h[:])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
