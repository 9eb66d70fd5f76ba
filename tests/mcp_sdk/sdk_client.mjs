// sdk_client.mjs URL TOKEN: drives a Shoal MCP server with the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk, installed by install.sh into the directory CMake copies this file
// to, so that ESM resolution finds its node_modules) and prints ONE JSON line on stdout:
//   {"ok":true,"protocolVersion":…,"serverInfo":{…},"instructions":…,"tools":[names…],
//    "calls":{"<label>":{"isError":bool,"text":…,"meta":{…}|null}|{"protocolError":{code,message}}}}
// or {"ok":false,"code":<HTTP status or JSON-RPC code>|null,"error":"…"} with exit code 1 when
// the session itself fails (e.g. 401 for a wrong token).
//
// The calls: echo {text}, echo {text, loud}, fail {}, boom {}, echo with an identity argument
// (`from`), echo with an undeclared argument, and an unknown tool (a protocol error).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node sdk_client.mjs URL TOKEN");
  process.exit(2);
}

function summarize(result) {
  const text = (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  return { isError: result.isError === true, text, meta: result._meta ?? null };
}

async function call(client, name, args) {
  try {
    return summarize(await client.callTool({ name, arguments: args }));
  } catch (e) {
    return { protocolError: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "shoal-sdk-test", version: "0.0.1" });
  await client.connect(transport);

  const listed = await client.listTools();
  const calls = {
    echo: await call(client, "echo", { text: "hello from the sdk" }),
    echoLoud: await call(client, "echo", { text: "quiet", loud: true }),
    fail: await call(client, "fail", {}),
    boom: await call(client, "boom", {}),
    identity: await call(client, "echo", { text: "x", from: "mallory" }),
    undeclared: await call(client, "echo", { text: "x", colour: "red" }),
    unknownTool: await call(client, "no_such_tool", {}),
  };
  const out = {
    ok: true,
    protocolVersion: transport.protocolVersion ?? null,
    sessionId: transport.sessionId ?? null,
    serverInfo: client.getServerVersion() ?? null,
    instructions: client.getInstructions() ?? null,
    tools: listed.tools.map((t) => t.name),
    titles: listed.tools.map((t) => t.title ?? null),
    calls,
  };
  await client.ping();
  await transport.terminateSession();
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  const out = { ok: false, code: e?.code ?? null, error: String(e?.stack ?? e) };
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(1);
});
