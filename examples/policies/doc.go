// Package policies holds example policy files for `sandcall serve --policy`
// and their `sandcall policy test` files:
//
//   - expense.yaml: the expense demo's reads are code-only; Q4 is denied
//     with a message.
//   - payments.yaml: a payments tool direct-only, with an amount condition,
//     a role and an approval.
//   - upstream.yaml: an upstream-style github_* family with a per-run quota
//     and a per-person rate limit on destructive tools.
//   - flow.yaml: information flow for the support-inbox demo: labels on
//     inbound mail (untrusted) and customer records (their readers), and
//     sink rules so that mail goes only to readers of what the run read
//     and no destructive call follows untrusted data.
//   - plans.yaml: plan rules (docs/programs.md): a program whose text
//     names both an inbox reader and a mail sender is refused before it
//     runs, as is a mail sender that computes a tool name at run time.
//
// The package's test runs every *_test.yaml through the code path of
// `sandcall policy test`, and runs a real program under expense.yaml.
package policies

import _ "embed"

// Flow is flow.yaml, for `sandcall demo inbox`.
//
//go:embed flow.yaml
var Flow []byte

// Plans is plans.yaml, for `sandcall demo programs`.
//
//go:embed plans.yaml
var Plans []byte
