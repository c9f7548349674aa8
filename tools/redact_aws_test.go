package tools_test

import (
	"strings"
	"testing"

	"github.com/sandcall/sandcall/tools"
)

// TestRedactAWSSecret: an AWS secret access key is redacted in free text
// and under keys naming it; hex digests and ordinary words are kept.
func TestRedactAWSSecret(t *testing.T) {
	const key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	if got := tools.Redact("export AWS=" + key + " done"); strings.Contains(got, key) {
		t.Errorf("free text: %q", got)
	}
	if got := string(tools.RedactJSON([]byte(`{"aws_secret_access_key":"abc","SecretAccessKey":"x"}`))); strings.Contains(got, "abc") || strings.Contains(got, `"x"`) {
		t.Errorf("keys: %s", got)
	}
	for _, keep := range []string{
		"da39a3ee5e6b4b0d3255bfef95601890afd80709",                         // SHA-1 hex
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", // SHA-256 hex
		"the quick brown fox jumps over the lazy dog",
	} {
		if got := tools.Redact(keep); got != keep {
			t.Errorf("%q redacted to %q", keep, got)
		}
	}
}
