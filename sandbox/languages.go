package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Languages is an Executor that hands each Job to the Executor configured
// for its Program.Language (an empty Language is JavaScript). A language
// with no Executor fails with E_SYNTAX and a hint naming the configured
// ones. A nil or empty Languages runs nothing.
type Languages map[Language]Executor

var _ Executor = Languages(nil)

// Execute implements Executor.
func (l Languages) Execute(ctx context.Context, job *Job, host Host) *Outcome {
	lang := job.Program.Language
	if lang == "" {
		lang = JavaScript
	}
	if ex := l[lang]; ex != nil {
		return ex.Execute(ctx, job, host)
	}
	var names []string
	for k, ex := range l {
		if ex != nil {
			names = append(names, string(k))
		}
	}
	sort.Strings(names)
	hint := "No language is configured on this server."
	if len(names) > 0 {
		hint = "Use one of the languages this server runs: " + strings.Join(names, ", ") + "."
	}
	return &Outcome{Err: Errorf(ESyntax, hint, fmt.Sprintf("language %q is not supported here", Cap(string(lang), 64)))}
}
