// sdk_client.mjs URL TOKEN: drives a Shoal MCP server with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk, installed by install.sh into the directory CMake copies this file
// to, so that ESM resolution finds its node_modules) and prints ONE JSON line on stdout:
//   {"ok":true,"protocolVersion":…,"serverInfo":{…},"instructions":…,"tools":[names…],
//    "calls":{"<label>":{"isError":bool,"text":…,"meta":{…}|null}|{"protocolError":{code,message}}}}
// or {"ok":false,"code":<HTTP status or JSON-RPC code>|null,"error":"…"} with exit code 1 when
// the session itself fails (e.g. 401 for a wrong token).
//
// The calls are sdk_calls.mjs's (shared with sdk_stdio_client.mjs).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { exercise, runReporting } from "./sdk_calls.mjs";

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node sdk_client.mjs URL TOKEN");
  process.exit(2);
}

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "shoal-sdk-test", version: "0.0.1" });
  await client.connect(transport);

  const exercised = await exercise(client);
  const out = {
    ok: true,
    protocolVersion: transport.protocolVersion ?? null,
    sessionId: transport.sessionId ?? null,
    serverInfo: client.getServerVersion() ?? null,
    instructions: client.getInstructions() ?? null,
    ...exercised,
  };
  await client.ping();
  await transport.terminateSession();
  await client.close();
  return out;
}

runReporting(main);
