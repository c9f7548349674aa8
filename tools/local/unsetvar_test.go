package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

// TestUnsetVarHint: a script failing on a variable sandcall did not pass
// on gets a hint naming --env and env_passthrough; the shells' and
// Python's own messages are recognised (unsetvar.txt).
func TestUnsetVarHint(t *testing.T) {
	for _, tc := range []struct {
		stderr, passed, want string
	}{
		{"./deploy: line 3: GITHUB_TOKEN: unbound variable", "", "--env GITHUB_TOKEN"},
		{"deploy: 3: GITHUB_TOKEN: parameter not set", "", "env_passthrough"},
		{"sh: 1: API_KEY: parameter null or not set", "", "--env API_KEY"},
		{"Traceback (most recent call last):\n  ...\nKeyError: 'OPENAI_API_KEY'", "", "--env OPENAI_API_KEY"},
		{"x: line 1: API_KEY: unbound variable", "API_KEY", "not set where sandcall runs"},
		{"x: line 1: SANDCALL_PARAM_NAME: unbound variable", "", ""},
		{"file not found", "", ""},
	} {
		var passed []string
		if tc.passed != "" {
			passed = []string{tc.passed}
		}
		got := unsetVarHint(tc.stderr, passed)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("unsetVarHint(%q) = %q, want %q in it", tc.stderr, got, tc.want)
		}
	}
}

// TestScriptUnsetVariable runs a script under set -u that reads a variable
// nobody passed on: the call's hint names the way out.
func TestScriptUnsetVariable(t *testing.T) {
	dir := t.TempDir()
	src := "#!/bin/bash\n# @description Deploys.\nset -u\necho \"$DEPLOY_TOKEN_FOR_TEST\"\n"
	if err := os.WriteFile(filepath.Join(dir, "deploy"), []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	set, _ := Load(Config{Dir: dir})
	ts := set.Tools()
	if len(ts) != 1 {
		t.Fatalf("tools %v", ts)
	}
	_, err := ts[0].Handler(context.Background(), json.RawMessage(`{}`))
	se := sandbox.AsError(err, sandbox.EInternal)
	if se.Code != sandbox.EToolFailed || !strings.Contains(se.Hint, "--env DEPLOY_TOKEN_FOR_TEST") {
		t.Errorf("error %+v", se)
	}
}

// TestUnsetVarData checks unsetvar.txt: each pattern captures the name.
func TestUnsetVarData(t *testing.T) {
	if len(unsetVarREs()) == 0 {
		t.Fatal("no patterns")
	}
	for _, re := range unsetVarREs() {
		if re.NumSubexp() != 1 {
			t.Errorf("%s: want one group (the variable's name), got %d", re, re.NumSubexp())
		}
	}
}
