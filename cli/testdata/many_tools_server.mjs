// An upstream MCP server (official TypeScript SDK, stdio) with many tools,
// for TestTSListToolsManyUpstreamTools: N tools named like a large
// service's (svcNN_verb_object), each with a description and an input
// schema, listed in pages of 500 as a real server would.
//
// usage: node many_tools_server.mjs N
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const n = Number(process.argv[2] || 5000);
const verbs = ["list", "get", "create", "update", "delete", "search", "archive", "restore"];
const objects = ["invoice", "customer", "order", "ticket", "project", "user", "repo", "alert", "report", "file"];
const tools = [];
for (let i = 0; i < n; i++) {
  const svc = "svc" + String(Math.floor(i / 80)).padStart(2, "0");
  const name = `${svc}_${verbs[i % verbs.length]}_${objects[Math.floor(i / verbs.length) % objects.length]}_${i}`;
  tools.push({
    name,
    description: `${verbs[i % verbs.length]} a ${objects[Math.floor(i / verbs.length) % objects.length]} in service ${svc}.`,
    inputSchema: { type: "object", properties: { id: { type: "string", description: "The id." } } },
    annotations: { readOnlyHint: i % verbs.length < 2 },
  });
}
const page = 500;
const server = new Server({ name: "many", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async (req) => {
  const start = Number(req.params?.cursor || 0);
  const next = start + page < tools.length ? String(start + page) : undefined;
  return { tools: tools.slice(start, start + page), ...(next ? { nextCursor: next } : {}) };
});
server.setRequestHandler(CallToolRequestSchema, async (req) => ({
  content: [{ type: "text", text: JSON.stringify({ tool: req.params.name, ok: true }) }],
}));
await server.connect(new StdioServerTransport());
