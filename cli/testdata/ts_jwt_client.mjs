// A client built on the official TypeScript MCP SDK, used by
// TestTypeScriptSDKJWT: against `sandcall serve --http` with JWT auth, it
// reads the 401's WWW-Authenticate with the SDK's own parser, discovers the
// protected resource metadata the way the SDK's OAuth flow does (from the
// hint, and path-aware without it), picks the resource indicator it would
// ask the authorization server for, then connects over streamable HTTP
// with the JWT and runs a program; a bad token's challenge is read too.
// It prints one JSON line.
//
// usage: node ts_jwt_client.mjs MCP_URL GOOD_TOKEN BAD_TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  selectResourceURL,
} from "@modelcontextprotocol/sdk/client/auth.js";

const [url, good, bad] = process.argv.slice(2);
const ping = (tok) =>
  fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...(tok ? { Authorization: `Bearer ${tok}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });

const anon = await ping("");
const anonParams = extractWWWAuthenticateParams(anon);
const hinted = await discoverOAuthProtectedResourceMetadata(url, { resourceMetadataUrl: anonParams.resourceMetadataUrl });
const pathAware = await discoverOAuthProtectedResourceMetadata(url);
const resource = await selectResourceURL(url, {}, hinted);

const badRes = await ping(bad);
const badParams = extractWWWAuthenticateParams(badRes);

const client = new Client({ name: "sandcall-ts-jwt-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${good}` } } }));
const run = await client.callTool({ name: "run_code", arguments: { code: "try { return await tools.ping({n: 1}) } catch (e) { return e.code }" } });
await client.close();

console.log(JSON.stringify({
  anon: { status: anon.status, resourceMetadataUrl: anonParams.resourceMetadataUrl?.href ?? null, error: anonParams.error ?? null },
  hinted: { resource: hinted.resource, authorizationServers: hinted.authorization_servers ?? [] },
  pathAware: { resource: pathAware.resource },
  resource: resource?.href ?? null,
  bad: { status: badRes.status, error: badParams.error ?? null },
  run: { ok: run.structuredContent?.ok ?? null, result: run.structuredContent?.result ?? null },
}));
