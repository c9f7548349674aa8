// Package localtools is the local-tools example: a project whose
// .agents/tools directory holds scripts that sandcall serves as tools.
//
//   - greet (bash) reads its parameters from SANDCALL_PARAM_<NAME>;
//   - word_stats (Python) reads them as JSON on stdin;
//   - no_description, bad_param, has.dot and not_executable are broken on
//     purpose: `sandcall tools check` explains each.
//
// Try it from this directory:
//
//	sandcall tools check          # ok greet, ok word_stats, skip … (exit 1)
//	sandcall tools list --demo    # the demo tools and the local ones, with callers
//	sandcall servers trust   # after reading the scripts: a project's scripts run only once trusted
//	echo 'return await tools.greet({name: "Ada"})' | sandcall run --isolation inprocess -
//
// git records the executable bit: every script but not_executable must be
// committed with mode 100755.
package localtools

// Dir is the example's tools directory, relative to this package.
const Dir = ".agents/tools"
