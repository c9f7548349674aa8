package bindings

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyNamingAliasWarns: a policy whose rule names a deprecated alias
// (which never matches: rules see the current name) is loaded with a
// warning naming the name to write instead; the current name is silent.
func TestPolicyNamingAliasWarns(t *testing.T) {
	b := newBroker(t, BrokerConfig{}, renamed())
	path := filepath.Join(t.TempDir(), "policy.yaml")
	for _, tc := range []struct {
		tool string
		warn bool
	}{{"prices", true}, {"get_prices", false}} {
		if err := os.WriteFile(path, []byte("version: 1\nrules:\n  - {name: ask, tools: ["+tc.tool+"], require_approval: true}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := LoadPolicyFile(path, b, slog.New(slog.NewTextHandler(&buf, nil))); err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(buf.String(), `names \"prices\", a deprecated name of get_prices`) && strings.Contains(buf.String(), "write get_prices")
		if got != tc.warn {
			t.Errorf("rule naming %s: warned %v, want %v\n%s", tc.tool, got, tc.warn, buf.String())
		}
	}
}
