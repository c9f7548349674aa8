// A client built on the official TypeScript MCP SDK, for
// TestTSListToolsManyUpstreamTools: it spawns sandcall with the given
// arguments over stdio, and lists the tools — listTools(), then each
// nextCursor to the end — until the upstream's WANT tools are there
// (listed, or counted in run_code's description when too many to list),
// listing again on each notifications/tools/list_changed. (A tool
// programs may not call is not counted in the description.) It prints one
// JSON line: each page's tool names and cursor. The SDK validates every
// page (a "tools": null page throws).
//
// usage: node ts_list_client.mjs WANT SANDCALL_BINARY ARGS...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [want, bin, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args, stderr: "inherit" });
const client = new Client({ name: "sandcall-ts-list", version: "1.0.0" });
let changed;
let changedP = new Promise((r) => (changed = r));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  const done = changed;
  changedP = new Promise((r) => (changed = r));
  done();
});
await client.connect(transport);

async function listAll() {
  const pages = [];
  let cursor;
  do {
    const res = await client.listTools(cursor ? { cursor } : undefined);
    pages.push({ names: res.tools.map((t) => t.name), nextCursor: res.nextCursor ?? null, tools: res.tools });
    cursor = res.nextCursor;
  } while (cursor && pages.length < 100);
  return pages;
}

function complete(pages) {
  let upstream = 0;
  let described = false;
  for (const p of pages) {
    for (const t of p.tools) {
      if (t.name.startsWith("many_")) upstream++;
      const m = t.name === "run_code" && /(\d+) tools are callable/.exec(t.description);
      if (m && Number(m[1]) >= Number(want)) described = true;
    }
  }
  return upstream >= Number(want) || described;
}

let pages = [];
let error;
for (;;) {
  const next = changedP;
  try {
    pages = await listAll();
  } catch (e) {
    error = String(e).slice(0, 300);
    break;
  }
  if (complete(pages)) break;
  await next;
}
console.log(JSON.stringify({ pages: pages.map(({ names, nextCursor }) => ({ names, nextCursor })), ...(error ? { error } : {}) }));
await client.close();
