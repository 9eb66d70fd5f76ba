// sdk_stdio_client.mjs SHOAL CONFIG: the official MCP TypeScript SDK (@modelcontextprotocol/sdk)
// as a stdio client of `SHOAL mcp --config CONFIG` — the bridge from stdio to a Streamable HTTP
// endpoint — so the SDK speaks to the server only through the bridge. Prints ONE JSON line on
// stdout, the same shape as sdk_client.mjs:
//   {"ok":true,"protocolVersion":…,"serverInfo":{…},"instructions":…,"tools":[names…],
//    "titles":[…],"calls":{…}}
// or {"ok":false,"code":<JSON-RPC code>|null,"error":"…"} with exit code 1 when the session
// itself fails (e.g. the bridge's error for a 401).
//
// The bridge's stderr (its log) is passed through to this script's stderr. Closing the client
// ends the bridge's stdin: it ends the session and exits.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { exercise, runReporting } from "./sdk_calls.mjs";

const [shoal, config] = process.argv.slice(2);
if (!shoal || !config) {
  console.error("usage: node sdk_stdio_client.mjs SHOAL_BINARY CONFIG");
  process.exit(2);
}

async function main() {
  const transport = new StdioClientTransport({
    command: shoal,
    args: ["--log-level", "info", "mcp", "--config", config],
    stderr: "inherit",
  });
  // The stdio transport has no protocol version of its own; the Client reports the negotiated
  // one to transports that ask for it.
  let protocolVersion = null;
  transport.setProtocolVersion = (v) => {
    protocolVersion = v;
  };
  const client = new Client({ name: "shoal-sdk-stdio-test", version: "0.0.1" });
  await client.connect(transport);

  const exercised = await exercise(client);
  const out = {
    ok: true,
    protocolVersion,
    serverInfo: client.getServerVersion() ?? null,
    instructions: client.getInstructions() ?? null,
    ...exercised,
  };
  await client.ping();
  await client.close();
  return out;
}

runReporting(main);
