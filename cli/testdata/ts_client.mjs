// A client built on the official TypeScript MCP SDK, used by TestTypeScriptSDK:
// it spawns `sandcall serve --demo` over stdio, lists the tools, runs the
// expense program with run_code, makes two direct calls, and prints one JSON
// line with what it saw. The SDK validates structuredContent against each
// tool's outputSchema, so this also checks our schemas.
//
// usage: node ts_client.mjs SANDCALL_BINARY PROGRAM_FILE
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, programFile] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["serve", "--demo"], stderr: "inherit" });
const client = new Client({ name: "sandcall-ts-test", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const code = readFileSync(programFile, "utf8");
const run = await client.callTool({ name: "run_code", arguments: { code } });
const direct = await client.callTool({ name: "get_budget_by_level", arguments: { level: "L3" } });
const bad = await client.callTool({ name: "get_budget_by_level", arguments: { level: "L9" } });
const failed = await client.callTool({ name: "run_code", arguments: { code: "throw new Error('boom')" } });

console.log(JSON.stringify({
  tools: tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema, readOnly: t.annotations?.readOnlyHint ?? null })),
  run: {
    isError: run.isError ?? false,
    ok: run.structuredContent?.ok,
    calls: run.structuredContent?.calls?.total,
    result: JSON.stringify(run.structuredContent?.result),
  },
  direct: { isError: direct.isError ?? false, structured: direct.structuredContent },
  bad: { isError: bad.isError ?? false, code: JSON.parse(bad.content[0].text).code },
  failed: { isError: failed.isError ?? false, code: failed.structuredContent?.error?.code },
}));
await client.close();
