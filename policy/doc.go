// Package policy compiles a policy file into an immutable *Checker that
// decides, for every tool call, whether it may proceed: who may call a tool
// (the model directly, or a program in the sandbox) and on what conditions.
// It is the OPA model: compile once (Load, Parse), evaluate per call
// (Checker.Decide). The package imports nothing of sandcall's; the host
// adapts its own types to Request (see bindings.PolicyAuthorizer).
//
// # File format
//
//	version: 1                       # required
//	defaults:                        # optional
//	  allowed_callers: [direct, code]  # for tools no rule selects
//	rules:                           # first rule that selects the tool decides
//	  - name: expense-reads          # optional; else the rule is "rules[i]"
//	    tools: [get_expenses, "get_*"] # exact names and globs (path.Match);
//	                                   # omitted: every tool
//	    match:                       # optional tool metadata, all must hold
//	      read_only: true            # also destructive, idempotent, open_world
//	      source: builtin            # "builtin", "local" or an upstream
//	                                 # server's name; a glob
//	    allowed_callers: [code]      # [direct], [code], [direct, code] or []
//	                                 # (no one); omitted: defaults
//	    when: 'args.quarter != "Q4"' # expr-lang, type-checked at load
//	    message: Q4 is not closed    # shown when the rule denies by callers
//	    hint: ask for Q1 to Q3       #   or by when
//	    max_calls_per_run: 20        # per tool, per run
//	    rate: {calls: 10, per: 1m}   # token bucket per principal and rule
//	    require_approval: true       # a person must approve each call
//	    approval_when: 'label.untrusted'  # optional: only calls for which
//	                                 # this holds need the approval
//	    log_args: true               # the arguments may be logged in clear
//	    pin: true                    # list as a direct MCP tool even when the
//	                                 # catalog is too large to list (Pinned)
//	labels:                          # optional: information flow (below)
//	  - name: inbound-mail           # optional
//	    tools: [list_messages]       # names and globs; omitted: every tool
//	    match: {source: github}      # optional, as in rules
//	    integrity: untrusted         # trusted or untrusted
//	    readers: [support@acme.example]  # or public
//	    result_labels: true          # honour labels in results' _meta
//	plans:                           # optional: refuse programs before they
//	  - name: read-then-send         # run, from what their text names
//	    names: [list_messages, "send_*"]  # (plans.go, docs/programs.md)
//	    refuse_when: 'plan.dynamic > 0'
//	    message: …                   # and hint
//
// Keys are strict: an unknown key, a duplicate key, a bad glob, an unknown
// caller or an expression that does not type-check is an error, reported as
// "file:line:col: message" (an *Error lists them all). YAML anchors and
// aliases are not accepted.
//
// # Rule order
//
// The first rule whose tools and match select the tool decides the call;
// later rules are not consulted, whatever the first one's `when` says. So
// put narrow rules before broad ones:
//
//	rules:
//	  - tools: [delete_repo]         # 1: selects delete_repo only
//	    allowed_callers: [direct]
//	  - tools: ["github_*", delete_repo]  # 2: never decides delete_repo
//	    max_calls_per_run: 20
//
// The deciding rule then checks, in order: the caller (allowed_callers),
// the per-run quota, the `when` condition, the rate limit. The first that
// fails denies; a rate token is taken only by a call that passes all the
// rest. A tool no rule selects gets defaults.allowed_callers; without a
// defaults section, and for rules that set no allowed_callers, the
// built-in default applies (below). Whatever the policy says, a tool that
// declares its own allowed callers is never called by another (rule
// "tool.allowed_callers").
//
// # No policy file
//
// Default returns the safe default: a tool's own allowed callers decide; a
// tool that declares none may be called by both callers, except destructive
// tools, which are direct-only (a person sees each call). Rule names:
// "default" and "default.destructive_direct_only". Whatever the defaults,
// a call of save_program (a model saving a program to run later) that no
// rule selects needs a person's approval (rule "default.approval").
//
// # Absent, not merely forbidden
//
// Checker.Exposes says whether a tool is offered to a caller at all (bound
// in programs, listed as an MCP tool). It uses the deciding rule's callers
// only; `when`, quotas and rate limits are per call and do not hide a tool.
// Every call is still decided at dispatch.
//
// # Expressions
//
// A `when` expression is expr-lang (https://expr-lang.org) that must be a
// bool. It sees:
//
//	caller        string               "direct" or "code"
//	tool          string               the tool's name
//	args          map[string]any       the arguments, as JSON data: objects,
//	                                   arrays, strings, numbers (float64),
//	                                   booleans, null
//	principal     {id string, roles []string}
//	run           {id string, calls int, calls_by_tool map[string]int,
//	               elapsed_ms float64}  zero for direct calls; counts are of
//	                                   the calls attempted before this one
//	tool_meta     {read_only, destructive, idempotent, open_world bool,
//	               source string}
//	label         the label of the call's arguments: run.label joined
//	              with the labels of opaque handles passed in them
//	run.label     the join of the labels of every result the run has read
//	arg_labels    map[string]label: each top-level argument's label,
//	              run.label joined with the handles that argument holds
//
// A label in an expression is {integrity string ("trusted" or "untrusted"),
// trusted, untrusted, public bool, readers []string ([] when public),
// sources []string (the tools whose results raised it)}.
//
// For example:
//
//	when: 'args.amount <= 1000 && "finance" in principal.roles'
//	when: 'caller == "direct" || run.calls_by_tool[tool] < 20'
//
//	when: 'label.public || all(args.to, # in label.readers)'   # CaMeL's send_email
//	when: '!label.untrusted'                                   # on destructive tools
//
// A missing argument is nil, and comparing nil with a number is an
// evaluation error: any evaluation error denies, with the error as the
// reason. Guard optional arguments: 'args.limit == nil || args.limit <= 100'.
//
// # Information flow
//
// Each tool's results carry a Label: integrity (trusted or untrusted) and
// confidentiality (the readers allowed to see them, or public). The first
// entry of the labels section that selects a tool sets its label; a part
// it leaves out, and a tool no entry selects, take DefaultLabel: untrusted
// for a tool whose annotations say it reaches an open world and for every
// upstream server's tool, trusted otherwise, public. With result_labels:
// true, labels a tool attaches to a result (ResultLabel reads the shapes)
// are joined in: they can make the label stricter, never weaker.
//
// The host (bindings) joins the label of every result a program reads into
// its run's label (Run.Label) and lists the results that raised it
// (Run.Flow); a rule whose `when` or approval_when reads label or
// run.label names that flow when it denies or asks for approval
// (Decision.Flow, in the reason and the message). Explicit data flow is
// covered; implicit flows (a branch on untrusted data that changes which
// call is made) and timing are not: see RATIONALE.md.
//
// # Security
//
// Expressions read plain data only. The environment has no methods, and the
// arguments are converted to maps, slices and scalars, so an expression
// cannot call into the host. The builtins that read the clock or the
// time-zone database (now, date, timezone, duration), that amplify their
// input (repeat) or that decode strings into new structures (fromJSON,
// toJSON, fromBase64, toBase64) are disabled at compile time, so a decision
// depends only on the request. An expression has at most 1,000 syntax
// nodes and 4 KiB of text; a predicate (all, any, filter, map, …) may not
// contain another, so one evaluation costs at most about the size of the
// arguments times the size of the expression; and each evaluation has a
// memory budget for the ranges, arrays and maps it builds.
//
// Arguments are checked before evaluation: over MaxArgsBytes (64 KiB) or
// nested deeper than MaxArgsDepth (32), the call is denied with that reason.
// The check applies only when the deciding rule's `when` refers to args.
//
// A Checker never panics out of Decide: a panic denies (rule
// "policy.error"). The caller and the principal come from the host, never
// from a client or a guest.
//
// # Limits
//
// Rate-limit buckets live in the Checker: a reloaded policy starts with full
// buckets, and at most MaxRateKeys buckets are kept (idle full ones are
// dropped; a principal that would need a new bucket in a full table is
// denied). Numbers in arguments are float64, so integers beyond 2^53 lose
// precision.
package policy
