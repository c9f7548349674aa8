// The expense workload on two peers of sandcall, for the comparisons in
// docs/measurements: isolated-vm (a new isolate and context per run, the
// tools as async references, the result copied out as JSON) and
// @utcp/code-mode (callToolChain, with the tools served in this process
// through @utcp/direct-call). Both run examples/expense/program.js against
// the reference generator's tools (examples/expense/testdata), and every
// result is checked against the workload's sha256.
//
//	npm install --prefix DIR isolated-vm@5.0.4 @utcp/code-mode@1.2.12 @utcp/sdk@1 @utcp/direct-call@1 --legacy-peer-deps
//	node bench/peers/peers.mjs DIR [runs]  > /dev/null   # medians on stderr, as JSON
//
// (code-mode's direct-call protocol logs every call to stdout, as shipped.)
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { asyncTools, warmCache } from '../../examples/expense/testdata/reference-data.mjs';

const SUMMARY_SHA256 = 'ced1ffb502f5a3b35468831e1b0cdef8f4aa4595953c23304d30e28b5555c250';
const program = readFileSync(new URL('../../examples/expense/program.js', import.meta.url), 'utf8');
const [dir, runsArg] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node peers.mjs NODE_MODULES_PREFIX [runs]');
  process.exit(2);
}
const runs = Number(runsArg || 30);
const require = createRequire(dir.replace(/\/?$/, '/') + 'node_modules/');
const ivm = require('isolated-vm');
const { CodeModeUtcpClient } = require('@utcp/code-mode');
const { addFunctionToUtcpDirectCall } = require('@utcp/direct-call');

const tools = {
  get_team_members: (a) => asyncTools.get_team_members(a.department),
  get_budget_by_level: (a) => asyncTools.get_budget_by_level(a.level),
  get_expenses: (a) => asyncTools.get_expenses(a.member_id, a.quarter),
};

function check(json) {
  const sum = createHash('sha256').update(json).digest('hex');
  if (sum !== SUMMARY_SHA256) throw new Error(`wrong result (sha256 ${sum}): ${json.slice(0, 80)}`);
}

// One run on isolated-vm: a new isolate and context, the tools as
// references the program awaits, the result copied out as JSON.
async function isolatedVM() {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  try {
    const context = await isolate.createContext();
    const call = new ivm.Reference(async (name, args) => JSON.stringify(await tools[name](JSON.parse(args))));
    await context.global.set('__call', call);
    const src = `const tools = new Proxy({}, { get: (_, name) => (args) =>
        __call.apply(undefined, [name, JSON.stringify(args)], { result: { promise: true } }).then(JSON.parse) });
      (async () => JSON.stringify(await (async () => { ${program} })()))()`;
    const json = await context.eval(src, { promise: true, timeout: 30000 });
    check(json);
  } finally {
    isolate.dispose();
  }
}

// code-mode: the manual "tools" holds the three tools, so the program's
// tools.get_team_members(...) names them; its calls return values (code-mode
// blocks the isolate on each), which the program's await passes through.
const schema = (props) => ({ type: 'object', properties: Object.fromEntries(props.map((p) => [p, { type: 'string' }])), required: props });
const manualTools = [['get_team_members', ['department']], ['get_budget_by_level', ['level']], ['get_expenses', ['member_id', 'quarter']]];
for (const [name] of manualTools) addFunctionToUtcpDirectCall(name, (...a) => asyncTools[name](...a));
addFunctionToUtcpDirectCall('expenseManual', async () => ({
  utcp_version: '1.0.0',
  tools: manualTools.map(([name, props]) => ({ name, description: name, inputs: schema(props),
    tool_call_template: { call_template_type: 'direct-call', callable_name: name } })),
}));
const client = await CodeModeUtcpClient.create();
await client.registerManual({ name: 'tools', call_template_type: 'direct-call', callable_name: 'expenseManual' });

async function codeMode() {
  const { result } = await client.callToolChain(program);
  check(JSON.stringify(result));
}

async function measure(name, run) {
  for (let i = 0; i < 3; i++) await run(); // warm-up
  const ds = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await run();
    ds.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ds.sort((a, b) => a - b);
  const median = ds.length % 2 ? ds[(ds.length - 1) / 2] : (ds[ds.length / 2 - 1] + ds[ds.length / 2]) / 2;
  return { peer: name, runs, median_ms: +median.toFixed(2), min_ms: +ds[0].toFixed(2), max_ms: +ds[ds.length - 1].toFixed(2) };
}

warmCache();
const pkg = (p) => JSON.parse(readFileSync(`${dir}/node_modules/${p}/package.json`, 'utf8')).version;
const rows = [
  { ...(await measure('isolated-vm', isolatedVM)), version: pkg('isolated-vm') },
  { ...(await measure('@utcp/code-mode', codeMode)), version: pkg('@utcp/code-mode') },
];
console.error(JSON.stringify(rows));
