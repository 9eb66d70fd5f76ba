// sdk_seat_client.mjs: the official MCP TypeScript SDK (@modelcontextprotocol/sdk) as the client
// of a REAL seat's MCP endpoint, calling every shoal_* tool.
//
//   node sdk_seat_client.mjs http URL TOKEN           Streamable HTTP, the seat's mcp.json
//   node sdk_seat_client.mjs stdio SHOAL_BINARY ARGS…  stdio, spawning `SHOAL_BINARY ARGS…`
//                                                      (`mcp --seat NAME --space S`, the bridge)
//
// For stdio the bridge gets the SDK's default environment (HOME, PATH, …) plus every XDG_*
// variable this script has, so it finds the same mesh and daemon the test started; its stderr
// (its log) is passed through to this script's stderr.
//
// The seat under test must be set up as seat_sdk_test.cc does: joined to #team.backend only,
// a role other than `reviewer`, and a present peer `bob` (id local.bob) holding `reviewer`.
// The calls leave the seat's channels and modes as they found them, so a second run (the other
// transport) sees the same state and returns the same results. Texts that peers receive name
// the transport ("… over http"), so the test can tell the two runs' traffic apart.
//
// Prints ONE JSON line on stdout:
//   {"ok":true,"transport":"http"|"stdio","protocolVersion":…,"serverInfo":{…},
//    "instructions":…,"tools":[names…],"calls":{"<label>":{"isError":bool,"text":…,
//    "meta":{…}|null}|{"protocolError":{code,message}}}}
// with the labels listed in exerciseSeat below, or {"ok":false,"code":…|null,"error":"…"}
// with exit code 1 when the session itself fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { call, runReporting } from "./sdk_calls.mjs";

const [mode, ...rest] = process.argv.slice(2);
if (!((mode === "http" && rest.length === 2) || (mode === "stdio" && rest.length >= 1))) {
  console.error(
    "usage: node sdk_seat_client.mjs http URL TOKEN | stdio SHOAL_BINARY ARGS…",
  );
  process.exit(2);
}

function transportFor() {
  if (mode === "http") {
    const [url, token] = rest;
    return new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  }
  const [command, ...args] = rest;
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === "HOME" || key.startsWith("XDG_")) env[key] = value;
  }
  return new StdioClientTransport({ command, args, env, stderr: "inherit" });
}

// Every shoal_* tool, with valid arguments and the failures a model can run into. The order
// matters: channel calls build on each other and end where they started (#team.backend only,
// every mode normal).
async function exerciseSeat(client) {
  const c = (name, args) => call(client, name, args);
  const over = ` over ${mode}`;
  const calls = {};
  calls.orientation = await c("shoal_orientation", {});
  calls.roster = await c("shoal_roster", {});
  calls.connectionStatus = await c("shoal_connection_status", {});
  calls.channels = await c("shoal_channels", {});

  calls.dm = await c("shoal_dm", { to: "bob", text: `hello bob${over}` });
  calls.dmById = await c("shoal_dm", { to: "local.bob", text: `by id${over}` });
  calls.dmEmptyText = await c("shoal_dm", { to: "bob", text: "" });
  calls.dmMissingText = await c("shoal_dm", { to: "bob" });
  calls.dmUnknownPeer = await c("shoal_dm", { to: "nobody_here", text: "hi" });
  calls.dmWithFrom = await c("shoal_dm", { to: "bob", text: "forged", from: "local.bob" });

  calls.send = await c("shoal_send", {
    channel: "team.backend",
    text: `a post${over}`,
    mentions: ["bob"],
  });
  calls.sendToOnlyChannel = await c("shoal_send", { text: `to my only channel${over}` });
  calls.sendUnknownMention = await c("shoal_send", {
    channel: "team.backend",
    text: "never stored",
    mentions: ["nobody_here"],
  });

  calls.join = await c("shoal_join", { channel: "team.sdk" });
  calls.joinAgain = await c("shoal_join", { channel: "team.sdk" });
  calls.joinBadName = await c("shoal_join", { channel: "Team Backend" });
  calls.sendSeveralJoined = await c("shoal_send", { text: "which channel?" });
  calls.channelsTwo = await c("shoal_channels", {});
  calls.modeQuiet = await c("shoal_channel_mode", { channel: "team.sdk", mode: "quiet" });
  calls.channelsQuiet = await c("shoal_channels", {});
  calls.modeNormal = await c("shoal_channel_mode", { channel: "team.sdk", mode: "normal" });
  calls.modeBad = await c("shoal_channel_mode", { channel: "team.sdk", mode: "loud" });
  calls.leave = await c("shoal_leave", { channel: "team.sdk" });
  calls.leaveAgain = await c("shoal_leave", { channel: "team.sdk" });
  calls.leaveBackend = await c("shoal_leave", { channel: "team.backend" });
  calls.sendNoneJoined = await c("shoal_send", { text: "nowhere to go" });
  calls.channelsNone = await c("shoal_channels", {});
  calls.rejoinBackend = await c("shoal_join", { channel: "team.backend" });

  calls.anycast = await c("shoal_anycast", { role: "reviewer", text: `review this${over}` });
  calls.anycastNoHolder = await c("shoal_anycast", { role: "nobody_holds", text: "anyone?" });

  calls.inbox = await c("shoal_inbox", {});
  calls.inboxBadLimit = await c("shoal_inbox", { limit: 0 });

  calls.statusWorking = await c("shoal_status", {
    status: "working",
    activity: `testing the tools${over}`,
  });
  calls.statusOffline = await c("shoal_status", { status: "offline" });
  calls.statusNothing = await c("shoal_status", {});

  calls.unknownTool = await c("shoal_no_such_tool", {});
  return calls;
}

async function main() {
  const transport = transportFor();
  // The stdio transport has no protocol version of its own; the Client reports the negotiated
  // one to transports that ask for it.
  let protocolVersion = null;
  if (mode === "stdio") {
    transport.setProtocolVersion = (v) => {
      protocolVersion = v;
    };
  }
  const client = new Client({ name: `shoal-seat-sdk-${mode}`, version: "0.0.1" });
  await client.connect(transport);

  const listed = await client.listTools();
  const calls = await exerciseSeat(client);
  const out = {
    ok: true,
    transport: mode,
    protocolVersion: mode === "http" ? (transport.protocolVersion ?? null) : protocolVersion,
    serverInfo: client.getServerVersion() ?? null,
    instructions: client.getInstructions() ?? null,
    tools: listed.tools.map((t) => t.name),
    calls,
  };
  await client.ping();
  if (mode === "http") await transport.terminateSession();
  await client.close();
  return out;
}

runReporting(main);
