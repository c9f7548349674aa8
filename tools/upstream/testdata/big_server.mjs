// A stdio MCP server in plain Node (no dependencies), for
// TestOversizedAnswer: tool "big" answers a text block of args.mb MiB
// (one JSON-RPC line far over the 16 MiB frame cap, its "id" after the
// result as the TypeScript SDK writes it); tool "small" answers "ok".
import { createInterface } from "node:readline";

const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined || m.method === undefined) return; // notifications, answers
  switch (m.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: m.id, result: {
        protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "big", version: "1.0.0" },
      } });
      return;
    case "tools/list":
      send({ jsonrpc: "2.0", id: m.id, result: { tools: [
        { name: "big", description: "Answers args.mb MiB of text.", inputSchema: { type: "object", properties: { mb: { type: "number" } } }, annotations: { readOnlyHint: true } },
        { name: "small", description: "Answers ok.", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
      ] } });
      return;
    case "tools/call": {
      const text = m.params.name === "big" ? "x".repeat(Math.round((m.params.arguments?.mb ?? 1) * 1048576)) : "ok";
      send({ result: { content: [{ type: "text", text }] }, jsonrpc: "2.0", id: m.id });
      return;
    }
    case "ping":
      send({ jsonrpc: "2.0", id: m.id, result: {} });
      return;
  }
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found" } });
});
