// Package policies holds example policy files for `sandcall serve --policy`
// and their `sandcall policy test` files:
//
//   - expense.yaml: the expense demo's reads are code-only; Q4 is denied
//     with a message.
//   - payments.yaml: a payments tool direct-only, with an amount condition,
//     a role and an approval.
//   - upstream.yaml: an upstream-style github_* family with a per-run quota
//     and a per-person rate limit on destructive tools.
//
// The package's test runs every *_test.yaml through the code path of
// `sandcall policy test`, and runs a real program under expense.yaml.
package policies
