package expense_test

import (
	"context"
	"testing"

	"github.com/sandcall/sandcall/bindings"
	"github.com/sandcall/sandcall/examples/expense"
	"github.com/sandcall/sandcall/sandbox"
	"github.com/sandcall/sandcall/sandbox/js"
	"github.com/sandcall/sandcall/sandbox/ts"
	"github.com/sandcall/sandcall/tools"
)

// TestProgramTS runs program.ts and program.js through the broker and the
// in-process engines: both return ReferenceSummary, byte for byte, with the
// same 56 calls.
func TestProgramTS(t *testing.T) {
	cat, err := tools.NewCatalog(expense.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	broker, err := bindings.NewBroker(bindings.BrokerConfig{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	eng := js.New(js.Config{})
	r, err := bindings.NewRunner(bindings.RunnerConfig{Broker: broker, Tier: "inprocess",
		Executor:  sandbox.Languages{sandbox.JavaScript: eng, sandbox.TypeScript: ts.New(ts.Config{JS: eng})},
		Languages: []sandbox.Language{sandbox.JavaScript, sandbox.TypeScript}})
	if err != nil {
		t.Fatal(err)
	}
	want := string(expense.ReferenceSummary())
	for _, p := range []sandbox.Program{
		{Language: sandbox.JavaScript, Source: expense.Program},
		{Language: sandbox.TypeScript, Source: expense.ProgramTS},
	} {
		res := r.Run(context.Background(), bindings.RunRequest{Program: p})
		if !res.OK {
			t.Fatalf("%s: %v", p.Language, res.Error)
		}
		if string(res.Result) != want || res.Calls.Total != expense.DirectCalls {
			t.Errorf("%s: %d calls, result %.80s…; want %d calls, ReferenceSummary (%d bytes)",
				p.Language, res.Calls.Total, res.Result, expense.DirectCalls, len(want))
		}
	}
	// The TypeScript is TypeScript: as JavaScript it does not parse.
	res := r.Run(context.Background(), bindings.RunRequest{Program: sandbox.Program{Source: expense.ProgramTS}})
	if res.OK || res.Error.Code != sandbox.ESyntax {
		t.Fatalf("program.ts as JavaScript: ok=%v err=%v, want E_SYNTAX", res.OK, res.Error)
	}
}
