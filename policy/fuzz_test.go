package policy

import (
	"errors"
	"testing"
)

// FuzzParse: compiling any bytes never panics, and either succeeds or
// reports an *Error with at least one problem; a compiled policy decides
// without panicking.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		policy50(),
		"version: 1\n",
		"version: 1\ndefaults: {allowed_callers: [direct]}\nrules: [{tools: [a], allowed_callers: [code], when: 'args.x > 1'}]\n",
		"version: 1\nrules:\n  - when: |\n      args.a == 1\n        && foo\n",
		"version: 1\nrules: [{rate: {calls: 2, per: 1m}, max_calls_per_run: 3, match: {source: 'a*'}}]\n",
		"version: 1\nx: &a [1]\ny: *a\n",
		"{version: 1, rules: [{tools: ['[']}]}",
		"version: 1\nrules: [{when: 'all(1..100000000, true)'}]\n",
	} {
		f.Add([]byte(s), []byte(`{"a": 1, "x": [1, 2]}`))
	}
	f.Fuzz(func(t *testing.T, src, args []byte) {
		c, err := Parse("f.yaml", src)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error is not an *Error with problems: %v", err)
			}
			return
		}
		for _, caller := range []string{Direct, Code} {
			for _, tool := range []string{"a", "github_x", ""} {
				req := &Request{Caller: caller, Tool: tool, Args: args, Meta: ToolMeta{Destructive: len(args)%2 == 0}}
				d := c.Decide(req)
				if d.Rule == "" || d.Reason == "" {
					t.Fatalf("decision without rule or reason: %+v", d)
				}
				c.Exposes(tool, req.Meta, caller, Principal{})
			}
		}
	})
}
