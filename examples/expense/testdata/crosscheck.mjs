// Cross-check helper for expense_test.go (run by the test when node is
// installed): reads {calls:[[tool, args]...], program} on stdin, prints
// {results:[compact JSON...], program:compact JSON of the program's result,
// summary: referenceSummary()} computed by the reference generator.
import { readFileSync } from 'node:fs';
import { syncTools, asyncTools, referenceSummary } from './reference-data.mjs';

const input = JSON.parse(readFileSync(0, 'utf8'));
const call = {
  get_team_members: (a) => syncTools.get_team_members(a.department),
  get_budget_by_level: (a) => syncTools.get_budget_by_level(a.level),
  get_expenses: (a) => syncTools.get_expenses(a.member_id, a.quarter),
};
const results = input.calls.map(([tool, args]) => JSON.stringify(call[tool](args)));
const tools = {
  get_team_members: async (a) => asyncTools.get_team_members(a.department),
  get_budget_by_level: async (a) => asyncTools.get_budget_by_level(a.level),
  get_expenses: async (a) => asyncTools.get_expenses(a.member_id, a.quarter),
};
const AsyncFunction = (async () => {}).constructor;
const program = JSON.stringify(await new AsyncFunction('tools', input.program)(tools));
process.stdout.write(JSON.stringify({ results, program, summary: referenceSummary() }));
