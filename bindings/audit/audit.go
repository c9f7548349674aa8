// Package audit is the audit file's format: JSON Lines, one record per run
// and per attempted call, written through a *slog.Logger (NewLogger) and
// summarized by ReadStats (`sandcall audit stats`).
//
// A record is a JSON object with "ts" (RFC 3339, UTC), "event" ("run" or
// "call") and the event's fields (docs/operations.md lists them). Every
// string is redacted of secret shapes and made visible
// (tools.NewRedactHandler) before it is written.
package audit

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/sandcall/sandcall/tools"
)

// NewLogger returns a logger that writes audit records to w: the message
// is the record's "event", the time its "ts", no level.
func NewLogger(w io.Writer) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 {
			return a
		}
		switch a.Key {
		case slog.TimeKey:
			return slog.String("ts", a.Value.Time().UTC().Format(time.RFC3339Nano))
		case slog.LevelKey:
			return slog.Attr{}
		case slog.MessageKey:
			return slog.String("event", a.Value.String())
		}
		return a
	}})
	return slog.New(tools.NewRedactHandler(h))
}

// ToolStats are one tool's figures: its calls by outcome, and the
// nearest-rank p50 and p95 of their durations.
type ToolStats struct {
	Tool   string  `json:"tool"`
	OK     int     `json:"ok"`
	Failed int     `json:"failed"`
	Denied int     `json:"denied"`
	P50MS  float64 `json:"p50_ms"`
	P95MS  float64 `json:"p95_ms"`
	durs   []float64
}

// Stats summarize an audit file.
type Stats struct {
	// Tools are the called tools, by name.
	Tools []*ToolStats `json:"tools"`
	// Runs counts runs by error code; "ok" for successful runs,
	// "suspended" for runs waiting for an approval.
	Runs    map[string]int `json:"runs"`
	Records int            `json:"records"`
	// Skipped counts the lines that are not audit records.
	Skipped int `json:"skipped"`
}

// maxRecord bounds one line of an audit file.
const maxRecord = 1 << 20

// ReadStats reads an audit file and summarizes it. Lines that are not
// audit records are counted as skipped; a line over 1 MiB is an error.
func ReadStats(r io.Reader) (*Stats, error) {
	st := &Stats{Runs: map[string]int{}, Tools: []*ToolStats{}}
	by := map[string]*ToolStats{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRecord)
	for sc.Scan() {
		var rec struct {
			Event      string  `json:"event"`
			Tool       string  `json:"tool"`
			Code       string  `json:"code"`
			Decision   string  `json:"decision"`
			DurationMS float64 `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || (rec.Event != "call" && rec.Event != "run") {
			st.Skipped++
			continue
		}
		st.Records++
		if rec.Event == "run" {
			c := rec.Code
			switch {
			case rec.Decision == "suspended": // waits for a person (2026-07-28)
				c = "suspended"
			case c == "":
				c = "ok"
			}
			st.Runs[c]++
			continue
		}
		t := by[rec.Tool]
		if t == nil {
			t = &ToolStats{Tool: rec.Tool}
			by[rec.Tool] = t
			st.Tools = append(st.Tools, t)
		}
		switch rec.Code {
		case "":
			t.OK++
		case "E_TOOL_DENIED":
			t.Denied++
		default:
			t.Failed++
		}
		t.durs = append(t.durs, rec.DurationMS)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, t := range st.Tools {
		slices.Sort(t.durs)
		t.P50MS, t.P95MS = quantile(t.durs, 0.50), quantile(t.durs, 0.95)
	}
	sort.Slice(st.Tools, func(i, j int) bool { return st.Tools[i].Tool < st.Tools[j].Tool })
	return st, nil
}

// quantile is the nearest-rank quantile of sorted xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
