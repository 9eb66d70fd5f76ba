// sdk_calls.mjs: the calls every SDK client script makes once connected, so the HTTP client
// (sdk_client.mjs) and the stdio client (sdk_stdio_client.mjs) check exactly the same things.
//
// exercise(client) lists the tools and calls: echo {text}, echo {text, loud}, fail {}, boom {},
// echo with an identity argument (`from`), echo with an undeclared argument, and an unknown tool
// (a protocol error). It returns {tools:[names…], titles:[…], calls:{"<label>":
// {"isError":bool,"text":…,"meta":{…}|null}|{"protocolError":{code,message}}}}.
//
// summarize(result) and call(client, name, args) make one call's entry in that shape; the seat
// client (sdk_seat_client.mjs) uses them too.

export function summarize(result) {
  const text = (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  return { isError: result.isError === true, text, meta: result._meta ?? null };
}

export async function call(client, name, args) {
  try {
    return summarize(await client.callTool({ name, arguments: args }));
  } catch (e) {
    return { protocolError: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}

export async function exercise(client) {
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
  return {
    tools: listed.tools.map((t) => t.name),
    titles: listed.tools.map((t) => t.title ?? null),
    calls,
  };
}

// Runs a client script's main(): its one JSON line on success, or {"ok":false,…} and exit 1.
export function runReporting(main) {
  main()
    .then((out) => process.stdout.write(JSON.stringify(out) + "\n"))
    .catch((e) => {
      const out = { ok: false, code: e?.code ?? null, error: String(e?.stack ?? e) };
      process.stdout.write(JSON.stringify(out) + "\n");
      process.exit(1);
    });
}
