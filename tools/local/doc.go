// Package local makes the scripts in a project's .agents/tools directory
// into tools: an executable file whose leading comment block declares
//
//	#!/bin/sh
//	# @description Count the lines of a file in the repository.
//	#   Continuation lines without a tag append to the description.
//	# @param *path string the file, relative to the project root
//	# @param verbose boolean also list the longest line
//
// becomes the tool named after the file ("*" marks a required parameter;
// the types are string, boolean, integer, number, array and object). Its
// input schema is a closed object. "#", "//" and "--" comments are read.
//
// A call runs the script with the arguments as a JSON object on stdin (then
// EOF) and as environment variables SANDCALL_PARAM_<NAME> and
// OCTOMIND_PARAM_<NAME> (upper-cased; strings raw, other values as JSON),
// plus SANDCALL_WORKDIR (the project root, also its working directory) and
// SANDCALL_TOOL_NAME. stdout is the result: parsed when it is JSON, else a
// string. When the script writes to stderr, the result is the string
// stdout + "\n[stderr]\n" + stderr. A non-zero exit is an E_TOOL_FAILED
// error carrying the exit code and stderr.
//
// Load reads the directory; Set.AddTo puts the tools in a catalog (a name
// already there wins: the local tool is skipped and reported); Set.Watch
// polls the directory and adds, removes and replaces tools as files change.
//
// # Security
//
// Script headers are untrusted text: only the first MaxHeaderBytes and
// MaxHeaderLines are read, control and zero-width characters are stripped
// from descriptions, and descriptions are capped (FuzzParseHeader). A script
// sees only the allow-listed variables PATH, HOME, LANG, LC_ALL, TZ and
// TMPDIR of the server's environment, never its secrets. A script is not
// sandboxed: it runs with the server's user and file system, like any tool
// the operator installed; every call still goes through the broker and the
// policy. Local tools claim no effects (zero Effects: not read-only, not
// idempotent), so the broker never retries them.
//
// # Trust
//
// A project's scripts run only when Config.Trust allows them, by path and
// by the SHA-256 of their content, asked when the directory is read and
// again before every call: a script rewritten after it was trusted (even
// to the same size, its modification time put back) does not run, and the
// call says what changed (UntrustedHint names the way out). The watcher's
// stamp adds the inode and change time. Set.Unavailable says why a refused
// script is not a tool; Set.Pending reads the directory at once for a name
// it has not seen yet, so an edit takes effect on the next call. Scripts
// are read bounded (MaxScriptBytes), regular files only, and, with
// Config.Contain, never through a link leaving the project. A script that
// fails on an unset variable gets a hint naming --env and env_passthrough
// (unsetvar.txt).
//
// # Limits
//
// Each call runs in its own process group, which is killed (SIGKILL) when
// the call's timeout passes (Config.Timeout, 30 s by default), when its
// context is cancelled, and when the script exits (so nothing it started
// in the background outlives the call). stdout over Config.MaxStdout (1 MiB)
// kills the script and fails the call with E_OUTPUT_LIMIT rather than
// returning a truncated, probably invalid, result; stderr over
// Config.MaxStderr (16 KiB) is truncated and ends with "…[truncated]".
//
// Every candidate file that is not a tool is an error for `sandcall tools
// check`, including a file that is not executable: a file in the tools
// directory is meant to be a tool, so a missing executable bit is most likely
// a mistake (git records it: chmod +x, then git add). Files whose names start
// with "." are not candidates.
package local
