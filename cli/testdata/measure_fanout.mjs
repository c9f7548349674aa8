// Used by TestMeasureRealFanoutTS: the official TypeScript MCP SDK client
// makes N parallel get-sum calls of the npm everything server, directly and
// through run_code on `sandcall serve` (each tier), the subjects taking turns
// round by round; it prints one JSON line of medians and minimums in ms.
//
// usage: node measure_fanout.mjs EVERYTHING_BIN SANDCALL_BIN PROJECT_DIR ROUNDS CALLS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [everything, sandcall, dir, roundsArg, callsArg] = process.argv.slice(2);
const rounds = Number(roundsArg), calls = Number(callsArg);

async function connect(command, args) {
  const client = new Client({ name: "sandcall-measure", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, cwd: dir, stderr: "ignore" }));
  return client;
}

const program = `const r = await Promise.all(Array.from({length: ${calls}}, (_, i) => tools.everything_get_sum({a: i, b: 1})));
let ok = 0;
for (let i = 0; i < r.length; i++) if (String(r[i]).includes("is " + (i + 1) + ".")) ok++;
return ok`;

const subjects = [];
const direct = await connect(everything, []);
subjects.push({ name: "direct (TypeScript SDK)", close: () => direct.close(), call: async () => {
  const rs = await Promise.all(Array.from({ length: calls }, (_, i) => direct.callTool({ name: "get-sum", arguments: { a: i, b: 1 } })));
  rs.forEach((r, i) => { if (r.isError || !r.content[0].text.includes(`is ${i + 1}.`)) throw new Error(`get-sum ${i}: ${JSON.stringify(r)}`); });
} });
for (const tier of ["inprocess", "process"]) {
  const c = await connect(sandcall, ["serve", "--trust-project", "--isolation", tier]);
  const s = { name: `run_code/${tier} (TypeScript SDK)`, close: () => c.close(), call: async () => {
    const r = await c.callTool({ name: "run_code", arguments: { code: program } });
    if (r.isError || r.structuredContent?.result !== calls) throw new Error(`${tier}: ${JSON.stringify(r).slice(0, 300)}`);
  } };
  // The upstream attaches in the background: wait until the calls go through.
  for (let t0 = Date.now(); ; ) {
    try { await s.call(); break; } catch (e) {
      if (Date.now() - t0 > 120000) throw e;
      await new Promise((res) => setTimeout(res, 200));
    }
  }
  subjects.push(s);
}
for (const s of subjects) s.ds = [];
for (let i = 0; i < rounds + 3; i++) {
  for (const s of subjects) {
    const t0 = performance.now();
    await s.call();
    if (i >= 3) s.ds.push(performance.now() - t0);
  }
}
const median = (a) => { const b = [...a].sort((x, y) => x - y); return b[Math.floor(b.length / 2)]; };
console.log(JSON.stringify(subjects.map((s) => ({ name: s.name, median_ms: median(s.ds), min_ms: Math.min(...s.ds), rounds: s.ds.length }))));
for (const s of subjects) await s.close();
