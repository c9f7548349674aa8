// Package programsdemo is the example of programs that last
// (docs/programs.md): a project whose .agents/programs directory holds
// programs that sandcall serves as tools, a plan read before each program
// runs, and state kept between runs.
//
//   - travel_overruns.js: the expense demo's question as a tool with a
//     quarter parameter (read-only). `tools list`, `tools search` and
//     `tools describe` show it like any tool; the model calls it directly or
//     from run_code as tools.travel_overruns({quarter: "Q3"}).
//   - triage_new.js: the support-inbox triage as a tool that remembers, in
//     state, which messages it has triaged: a second run files no ticket
//     twice. The list it keeps was written after reading inbound mail and
//     customer records, so it carries their label: a later run that reads it
//     cannot mail it outside (examples/policies/flow.yaml).
//
// Try it from this directory:
//
//	sandcall plan .agents/programs/travel_overruns.js   # what it will call, before it runs
//	sandcall servers trust                              # a project's programs run only once trusted
//	sandcall tools list --demo                          # travel_overruns, source "program"
//	echo 'return await tools.travel_overruns({quarter: "Q3"})' | sandcall run --demo -
//	sandcall plan --demo-inbox clean --policy ../policies/plans.yaml ../inbox/program.js  # refused (exit 1)
//
// state between runs needs one server process (`sandcall serve`) or a
// shared store (store: redis://… in sandcall.yaml): each `sandcall run`
// process starts with an empty memory store. The package's test runs all
// three parts in process.
package programsdemo

import _ "embed"

// Dir is the example's programs directory, relative to this package.
const Dir = ".agents/programs"

// Files are the example's program files by name, for `sandcall demo
// programs`.
var Files = map[string]string{"travel_overruns.js": travelOverruns, "triage_new.js": triageNew}

var (
	//go:embed .agents/programs/travel_overruns.js
	travelOverruns string
	//go:embed .agents/programs/triage_new.js
	triageNew string
)
