package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/bindings/audit"
	"github.com/sandcall/sandcall/bindings/mcpserver/jwttest"
)

type bearerAuth struct{ tok string }

func (b bearerAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

func hashOf(t *testing.T, tok string) string {
	t.Helper()
	out, stderr, code := sandcall(t, tok+"\n", "token", "hash")
	if code != 0 {
		t.Fatalf("token hash: %d %s", code, stderr)
	}
	return strings.TrimSpace(out)
}

// TestServeBearerAuth: the real binary with tokens in sandcall.yaml; no
// token and a wrong one get 401; each right one runs as its principal,
// which a `when` on principal.roles sees; the audit file and /metrics
// record the calls; `audit stats` summarizes the file.
func TestServeBearerAuth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "policy.yaml", `version: 1
rules:
  - name: finance-ping
    tools: [ping]
    when: '"finance" in principal.roles'
    message: only finance may ping
`)
	cfg := writeFile(t, dir, "sandcall.yaml", `version: 1
policy: policy.yaml
audit: audit.jsonl
auth:
  tokens:
    - sha256: `+hashOf(t, "fin-secret-token")+`
      principal: fiona
      roles: [finance]
    - sha256: `+hashOf(t, "eng-secret-token")+`
      principal: eddie
      roles: [eng]
`)
	url, _ := startHTTP(t, "--demo", "--isolation", "inprocess", "--config", cfg)
	for _, tok := range []string{"", "wrong"} {
		resp, _ := jwttest.Post(t, url, tok)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("token %q: %d, WWW-Authenticate %q", tok, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if got := runPing(t, url, "fin-secret-token"); got != float64(2) {
		t.Errorf("fiona: %v", got)
	}
	if got := runPing(t, url, "eng-secret-token"); got != "E_TOOL_DENIED" {
		t.Errorf("eddie: %v", got)
	}

	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer eng-secret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`sandcall_tool_calls_total{caller="code",outcome="ok",tool="ping"} 1`,
		`sandcall_tool_calls_total{caller="code",outcome="denied",tool="ping"} 1`, `sandcall_runs_total{code="",outcome="ok"} 2`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	auditFile, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"fin-secret-token", "eng-secret-token"} {
		if strings.Contains(string(auditFile), leak) {
			t.Errorf("audit file holds %q", leak)
		}
	}
	var principals []string
	for _, l := range strings.Split(strings.TrimSpace(string(auditFile)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if rec["event"] == "call" {
			principals = append(principals, rec["principal"].(string)+":"+rec["decision"].(string))
			if rec["ts"] == nil || rec["args_sha256"] == "" || rec["tier"] != "inprocess" {
				t.Errorf("call record %v", rec)
			}
		}
	}
	if strings.Join(principals, ",") != "fiona:allow,eddie:deny" {
		t.Errorf("call records: %v", principals)
	}

	out, stderr, code := sandcall(t, "", "audit", "stats", "--json", filepath.Join(dir, "audit.jsonl"))
	if code != 0 {
		t.Fatalf("audit stats: %d %s", code, stderr)
	}
	var st audit.Stats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Tools) != 1 || st.Tools[0].Tool != "ping" || st.Tools[0].OK != 1 || st.Tools[0].Denied != 1 || st.Runs["ok"] != 2 {
		t.Errorf("stats %s", out)
	}
	out, _, _ = sandcall(t, "", "audit", "stats", filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(out, "ping") || !strings.Contains(out, "runs: ok=2") {
		t.Errorf("stats text:\n%s", out)
	}
}

func TestServeRemoteNeedsTokens(t *testing.T) {
	t.Parallel()
	_, stderr, code := sandcall(t, "", "serve", "--http", "0.0.0.0:0", "--allow-remote")
	if code != 2 || !strings.Contains(stderr, "needs bearer tokens") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}
