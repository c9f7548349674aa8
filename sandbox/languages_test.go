package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sandcall/sandcall/sandbox"
)

type fixedExecutor string

func (f fixedExecutor) Execute(context.Context, *sandbox.Job, sandbox.Host) *sandbox.Outcome {
	return &sandbox.Outcome{Value: json.RawMessage(`"` + string(f) + `"`)}
}

func TestLanguages(t *testing.T) {
	l := sandbox.Languages{sandbox.JavaScript: fixedExecutor("js"), sandbox.WASM: fixedExecutor("wasm")}
	for lang, want := range map[sandbox.Language]string{"": `"js"`, sandbox.JavaScript: `"js"`, sandbox.WASM: `"wasm"`} {
		o := l.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Language: lang}}, nil)
		if o.Err != nil || string(o.Value) != want {
			t.Errorf("%q: got %s, %v; want %s", lang, o.Value, o.Err, want)
		}
	}
	o := l.Execute(context.Background(), &sandbox.Job{Program: sandbox.Program{Language: "cobol"}}, nil)
	if !errors.Is(o.Err, sandbox.ErrSyntax) || !strings.Contains(o.Err.Hint, "javascript, wasm") {
		t.Errorf("cobol: err = %v (hint %q), want E_SYNTAX naming javascript, wasm", o.Err, o.Err.Hint)
	}
	o = sandbox.Languages(nil).Execute(context.Background(), &sandbox.Job{}, nil)
	if !errors.Is(o.Err, sandbox.ErrSyntax) {
		t.Errorf("nil: err = %v, want E_SYNTAX", o.Err)
	}
}
