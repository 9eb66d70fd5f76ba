#!/usr/bin/env python3
"""A scripted, rule-based fake of the Anthropic Messages API, the OpenAI Responses API and the
OpenAI Chat Completions API, for driving the real Claude Code CLI, the real `codex app-server`
and the real `opencode serve` offline in tests (tests/runtime_real/).

Three routes are served: `POST /v1/messages` (Anthropic, with or without a query such as
`?beta=true`), `POST /v1/responses` (OpenAI Responses) and `POST /v1/chat/completions` (OpenAI
Chat Completions); every other request (the Claude CLI's `HEAD /` pre-connect included) gets a
404.

Anthropic (`/v1/messages`). Replies stream as SSE in the order the CLI expects:
message_start, content_block_start, content_block_delta (text_delta or input_json_delta),
content_block_stop, message_delta (stop_reason end_turn or tool_use), message_stop. The body
ends when the connection closes.

Replies follow rules, not a sequence (the CLI may send side requests), applied to the LAST
message with role "user" (the CLI can append a role "system" message after it, and puts
`<system-reminder>` text blocks before the user's own text):
  * its last block is a tool_result        -> text  "TOOL_RESULT_SEEN: <the result's text>"
  * the user text contains FAKE_MODEL_CONTEXT (and is not a summary request: no
    `<conversation>` in it) -> HTTP 400 context_length_exceeded (OpenAI routes: the OpenAI
    context-length error body, which OpenCode turns into ContextOverflowError)
  * the user text contains FAKE_MODEL_500  -> HTTP 500 (FAKE_MODEL_400 -> HTTP 400), with an
                                              Anthropic-shaped JSON error body
  * the user text contains "CALL_ECHO <w>" -> a tool_use of the first offered tool whose name
                                              ends in "echo", input {"text": "<w>"}
  * the user text contains "CALL_TOOL <suffix> <json>" -> a tool_use of the first offered tool
                                              whose name ends in <suffix>, input <json> (one
                                              JSON object on the rest of that line)
  * otherwise                              -> text  "fake-reply-N: <last 200 chars of the text>"

Responses (`/v1/responses`; Codex sets base_url to `http://127.0.0.1:PORT/v1`, wire_api
"responses"). The same rules, applied to the request's `input` items: a tool call's output
(`function_call_output`) after the last user message is the tool result; otherwise the text of
the last `role:"user"` message, without the parts Codex adds itself (`<environment_context>`,
`<user_instructions>`, `# AGENTS.md` …). Tool calls are `function_call` items; a tool offered
inside a `namespace` (how Codex offers MCP tools, e.g. `mcp__echo` / `echo`) is called with that
`namespace`. One more rule, after CALL_ECHO:
  * the user text contains "CALL_SHELL <cmd>"   -> an `exec_command` call {"cmd": "<cmd>"}
    ("CALL_SHELL_ESC <cmd>" adds sandbox_permissions "require_escalated" and a justification,
    which makes Codex ask its client for approval when its policy allows asking)
Replies stream as SSE (`event: <type>` + `data: <json>`, with `sequence_number`):
response.created, response.in_progress, response.output_item.added, then for text
response.content_part.added, response.output_text.delta…, response.output_text.done,
response.content_part.done, or for a call response.function_call_arguments.delta…/done, then
response.output_item.done and response.completed (with `usage`). Errors use the OpenAI shape
{"error": {"message", "type", "param", "code"}}. Each request is logged like an Anthropic one,
with `items` (the input length) and `tools` (offered names, `namespace/name` inside one)
instead of `messages`.

Chat Completions (`/v1/chat/completions`; OpenCode's `@ai-sdk/openai-compatible` provider with
`options.baseURL` `http://127.0.0.1:PORT/v1`). The same rules as Anthropic (CALL_SHELL is not
one), applied to the request's `messages`: `role:"tool"` messages after the last user message
are the tool result (their contents joined; how a follow-up request after a tool call looks);
otherwise the text of the last `role:"user"` message (a string, or its `type:"text"` parts
without `<system-reminder>` ones). Offered tools are `{"type":"function","function":{"name"…}}`;
OpenCode names an MCP tool `<server>_<tool>` (e.g. `shoal_dm`, `echo_echo`), which the suffix
rules match. Replies stream as SSE `data: <chat.completion.chunk>` lines (no `event:` names):
a first delta with `role:"assistant"`, then `content` deltas, or one `tool_calls` delta
({index, id "call_fake_…", type "function", function {name, arguments ""}}) followed by
argument deltas; then a chunk with `finish_reason` "stop" or "tool_calls", a usage-only chunk
(`choices: []`, sent whatever `stream_options.include_usage` says), and `data: [DONE]`.
Without `stream` the answer is one `chat.completion` object. Errors use the OpenAI shape. Each
request is logged with `messages` (the count), `roles` and `tools` (offered names). OpenCode
sends one side request per session created without a `title` (title generation: no tools,
roles system, user, user), which takes a reply number: give sessions a title.

Knobs (all routes): --port (0 picks a free one), --log PATH (one JSON line per request),
--delay-s F (answer F seconds late), --status N (answer every model request with HTTP error N).
Once bound it prints exactly one line, `listening on 127.0.0.1:PORT`, to stdout. SIGTERM/SIGINT
stop it.

Python 3 standard library only.
"""

import argparse
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# Headers copied into the request log (lower-case names).
LOGGED_HEADERS = (
    "user-agent",
    "x-api-key",
    "authorization",
    "anthropic-version",
    "anthropic-beta",
    "x-app",
    "x-claude-code-session-id",
    "content-type",
)

# The Anthropic error `type` for an HTTP status.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

TEXT_TAIL = 200  # how much of the user text a fake reply quotes
DELTA_CHARS = 16  # text / JSON per content_block_delta
CALL_ECHO = re.compile(r"CALL_ECHO\s+(\S+)")
CALL_TOOL = re.compile(r"CALL_TOOL\s+(\S+)\s+(\{.*\})")


class FakeModel:
    """Shared state of the server: options, the reply counter, the request log."""

    def __init__(self, log_path, delay_s, forced_status):
        self.delay_s = delay_s
        self.forced_status = forced_status
        self._lock = threading.Lock()
        self._replies = 0
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None

    def next_reply_number(self):
        with self._lock:
            self._replies += 1
            return self._replies

    def log(self, record):
        if self._log is None:
            return
        line = json.dumps(record, ensure_ascii=False)
        with self._lock:
            self._log.write(line + "\n")
            self._log.flush()


def block_text(block):
    """The text of a content block (a string, a text block, or a tool_result's content)."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    if block.get("type") == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return "\n".join(block_text(b) for b in content)
        return str(content)
    return ""


def last_user_turn(body):
    """(user_text, tool_result_text or None) of the last role:"user" message."""
    messages = body.get("messages") or []
    user = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"),
                None)
    if user is None:
        return "", None
    content = user.get("content", "")
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list) or not content:
        return "", None
    last = content[-1]
    if isinstance(last, dict) and last.get("type") == "tool_result":
        return block_text(last), block_text(last)
    texts = [block_text(b) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    own = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
    return "\n".join(own if own else texts), None


def tool_name_ending(body, suffix):
    for tool in body.get("tools") or []:
        name = tool.get("name", "") if isinstance(tool, dict) else ""
        if name.endswith(suffix):
            return name
    return None


def echo_tool_name(body):
    return tool_name_ending(body, "echo")


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode("utf-8")


def chunks(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


# --- OpenAI Responses (`POST /v1/responses`, for `codex app-server`) ---

# Headers copied into the log of a Responses request (lower-case names).
RESPONSES_LOGGED_HEADERS = (
    "user-agent",
    "authorization",
    "accept",
    "originator",
    "session-id",
    "thread-id",
    "x-codex-turn-metadata",
    "content-type",
    "content-encoding",
)

# The OpenAI error `type` for an HTTP status (anything else: server_error).
OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_error",
}

# OpenAI's context-length refusal (HTTP 400), as providers send it.
CONTEXT_LENGTH_ERROR = {"error": {
    "message": "This model's maximum context length is 1000 tokens. However, your messages "
               "resulted in 5000 tokens.",
    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}

CALL_SHELL = re.compile(r"CALL_SHELL(_ESC)?[ \t]+([^\n]+)")

# Text parts Codex adds to user messages on its own (environment, AGENTS.md, skills): they are
# not the user's words, so the rules never look at them.
CODEX_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "<skills_instructions>",
    "<turn_aborted>",
    "# AGENTS.md",
)


def is_codex_context(text):
    return text.lstrip().startswith(CODEX_CONTEXT_PREFIXES)


def response_content_text(content):
    """The text parts of a Responses item's `content` (or a tool call's `output`), as a list."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [str(part.get("text", "")) for part in content
            if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text")]


def last_responses_turn(body):
    """(user_text, tool_result_text or None) for a Responses request.

    A tool call's output after the last user message is a tool result; otherwise the user text
    is the last user message's own text (Codex's context parts left out; a user message made
    only of those is skipped)."""
    items = body.get("input")
    if isinstance(items, str):
        return items, None
    if not isinstance(items, list):
        return "", None
    for item in reversed(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output"):
            result = "\n".join(response_content_text(item.get("output")))
            return result, result
        if kind == "message" and item.get("role") == "user":
            own = [t for t in response_content_text(item.get("content")) if not is_codex_context(t)]
            if own:
                return "\n".join(own), None
    return "", None


def responses_tool_ending(body, suffix):
    """(namespace or None, name) of the first offered function tool whose name ends in `suffix`,
    looking inside `namespace` tools too (how Codex offers MCP tools); None if there is none."""
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                name = inner.get("name", "") if isinstance(inner, dict) else ""
                if isinstance(name, str) and name.endswith(suffix):
                    return tool.get("name"), name
        elif tool.get("type") == "function":
            name = tool.get("name", "")
            if isinstance(name, str) and name.endswith(suffix):
                return None, name
    return None


def responses_tool_names(body):
    """Offered tool names for the log (`namespace/name` for tools inside a namespace)."""
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names.extend(f"{tool.get('name')}/{inner.get('name')}"
                         for inner in tool.get("tools") or [] if isinstance(inner, dict))
        else:
            names.append(str(tool.get("name") or tool.get("type")))
    return names


def sse_data(data):
    text = json.dumps(data, ensure_ascii=False)
    return f"event: {data['type']}\ndata: {text}\n\n".encode("utf-8")


# --- OpenAI Chat Completions (`POST /v1/chat/completions`, for `opencode serve`) ---

# Headers copied into the log of a Chat Completions request (lower-case names).
CHAT_LOGGED_HEADERS = (
    "user-agent",
    "authorization",
    "accept",
    "content-type",
)


def chat_content_text(content, drop_reminders=False):
    """The text of a chat message's `content`: a string, or its `type:"text"` parts joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [str(part.get("text", "")) for part in content
             if isinstance(part, dict) and part.get("type") == "text"]
    if drop_reminders:
        own = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
        texts = own or texts
    return "\n".join(texts)


def last_chat_turn(body):
    """(user_text, tool_result_text or None) for a Chat Completions request: the `role:"tool"`
    messages after the last user message are a tool result, else the last user message's text
    (a user message without text is skipped)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "", None
    results = []
    for message in reversed(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            results.insert(0, chat_content_text(message.get("content")))
        elif role == "user":
            if results:
                break
            text = chat_content_text(message.get("content"), drop_reminders=True)
            if text:
                return text, None
    if results:
        result = "\n".join(results)
        return result, result
    return "", None


def chat_tool_names(body):
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            function = tool.get("function")
            names.append(str(function.get("name")) if isinstance(function, dict)
                         else str(tool.get("name") or tool.get("type")))
    return names


def chat_tool_ending(body, suffix):
    return next((name for name in chat_tool_names(body) if name.endswith(suffix)), None)


def sse_chat(data):
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode("utf-8")


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-model/1"
    protocol_version = "HTTP/1.0"  # one request per connection; SSE ends at close

    @property
    def model(self):
        return self.server.fake_model

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass  # the JSON request log replaces the default stderr chatter

    def _headers_for_log(self):
        return {k: self.headers[k] for k in LOGGED_HEADERS if self.headers.get(k) is not None}

    def _read_body(self):
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status, payload):
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_error(self, status, message):
        self._send_json(status, {
            "type": "error",
            "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
        })

    def _not_found(self):
        self.model.log({"ts": time.time(), "method": self.command, "path": self.path,
                        "headers": self._headers_for_log(), "status": 404})
        self._send_error(404, f"fake model: no route for {self.command} {urlsplit(self.path).path}")

    do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_found

    def do_POST(self):
        route = urlsplit(self.path).path
        if route == "/v1/responses":
            self._post_responses()
            return
        if route == "/v1/chat/completions":
            self._post_chat()
            return
        if route != "/v1/messages":
            self._read_body()
            self._not_found()
            return
        record = {"ts": time.time(), "method": "POST", "path": self.path,
                  "headers": self._headers_for_log()}
        try:
            body = json.loads(self._read_body() or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except (ValueError, UnicodeDecodeError) as e:
            record.update(status=400, error=f"bad request body: {e}")
            self.model.log(record)
            self._send_error(400, f"fake model: bad request body: {e}")
            return

        user_text, tool_result = last_user_turn(body)
        record.update(model=body.get("model"), stream=bool(body.get("stream")),
                      messages=len(body.get("messages") or []), user_text=user_text)
        if self.model.delay_s > 0:
            time.sleep(self.model.delay_s)

        status = self.model.forced_status
        if status is None and tool_result is None:
            if "FAKE_MODEL_500" in user_text:
                status = 500
            elif "FAKE_MODEL_400" in user_text:
                status = 400
        if status is not None:
            record.update(status=status, reply=f"fake forced error {status}")
            self.model.log(record)
            self._send_error(status, f"fake forced error {status}")
            return

        reply = self._choose_reply(body, user_text, tool_result)
        record.update(status=200, reply=reply)
        self.model.log(record)
        self._answer(body, reply)

    def _choose_reply(self, body, user_text, tool_result):
        """{"text": …} or {"tool_use": {"id", "name", "input"}}."""
        if tool_result is not None:
            return {"text": f"TOOL_RESULT_SEEN: {tool_result}"}
        scripted = CALL_TOOL.search(user_text)
        if scripted:
            tool = tool_name_ending(body, scripted.group(1))
            try:
                args = json.loads(scripted.group(2))
            except ValueError:
                return {"text": "fake-model: CALL_TOOL arguments are not one JSON object"}
            if tool is None:
                return {"text": f"fake-model: CALL_TOOL but no tool ending in {scripted.group(1)}"}
            return {"tool_use": {"id": "toolu_fake_" + secrets.token_hex(5), "name": tool,
                                 "input": args}}
        call = CALL_ECHO.search(user_text)
        tool = echo_tool_name(body) if call else None
        if call and tool:
            return {"tool_use": {"id": "toolu_fake_" + secrets.token_hex(5), "name": tool,
                                 "input": {"text": call.group(1)}}}
        if call:
            return {"text": "fake-model: CALL_ECHO but no tool ending in echo was offered"}
        n = self.model.next_reply_number()
        return {"text": f"fake-reply-{n}: {user_text[-TEXT_TAIL:]}"}

    def _answer(self, body, reply):
        message_id = "msg_fake_" + secrets.token_hex(6)
        model = body.get("model") or "fake-model"
        usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if "tool_use" in reply:
            block = dict(reply["tool_use"], type="tool_use")
            stop_reason = "tool_use"
        else:
            block = {"type": "text", "text": reply["text"]}
            stop_reason = "end_turn"

        if not body.get("stream"):
            self._send_json(200, {"id": message_id, "type": "message", "role": "assistant",
                                  "model": model, "content": [block], "stop_reason": stop_reason,
                                  "stop_sequence": None, "usage": dict(usage, output_tokens=5)})
            return

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        out = [sse("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})]
        if block["type"] == "tool_use":
            out.append(sse("content_block_start", {
                "type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"],
                                  "input": {}}}))
            for part in chunks(json.dumps(block["input"]), DELTA_CHARS):
                out.append(sse("content_block_delta", {
                    "type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": part}}))
        else:
            out.append(sse("content_block_start", {
                "type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}))
            for part in chunks(block["text"], DELTA_CHARS):
                out.append(sse("content_block_delta", {
                    "type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": part}}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        out.append(sse("message_delta", {
            "type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 5}}))
        out.append(sse("message_stop", {"type": "message_stop"}))
        try:
            for event in out:
                self.wfile.write(event)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (an interrupt); nothing to answer

    # --- POST /v1/responses ---

    def _send_openai_error(self, status, message):
        self._send_json(status, {"error": {
            "message": message, "type": OPENAI_ERROR_TYPES.get(status, "server_error"),
            "param": None, "code": None}})

    def _post_responses(self):
        record = {"ts": time.time(), "method": "POST", "path": self.path,
                  "headers": {k: self.headers[k] for k in RESPONSES_LOGGED_HEADERS
                              if self.headers.get(k) is not None}}
        try:
            body = json.loads(self._read_body() or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except (ValueError, UnicodeDecodeError) as e:
            record.update(status=400, error=f"bad request body: {e}")
            self.model.log(record)
            self._send_openai_error(400, f"fake model: bad request body: {e}")
            return

        user_text, tool_result = last_responses_turn(body)
        items = body.get("input")
        record.update(model=body.get("model"), stream=bool(body.get("stream")),
                      items=len(items) if isinstance(items, list) else 1,
                      tools=responses_tool_names(body), user_text=user_text)
        if self.model.delay_s > 0:
            time.sleep(self.model.delay_s)

        status = self.model.forced_status
        if status is None and tool_result is None:
            if "FAKE_MODEL_500" in user_text:
                status = 500
            elif "FAKE_MODEL_400" in user_text:
                status = 400
        if status is not None:
            record.update(status=status, reply=f"fake forced error {status}")
            self.model.log(record)
            self._send_openai_error(status, f"fake forced error {status}")
            return

        reply = self._choose_responses_reply(body, user_text, tool_result)
        record.update(status=200, reply=reply)
        self.model.log(record)
        self._answer_responses(body, reply)

    def _choose_responses_reply(self, body, user_text, tool_result):
        """{"text": …} or {"call": {"namespace" (optional), "name", "arguments"}}."""
        def call(found, args):
            c = {"name": found[1], "arguments": json.dumps(args)}
            if found[0]:
                c["namespace"] = found[0]
            return {"call": c}

        if tool_result is not None:
            return {"text": f"TOOL_RESULT_SEEN: {tool_result}"}
        scripted = CALL_TOOL.search(user_text)
        if scripted:
            found = responses_tool_ending(body, scripted.group(1))
            try:
                args = json.loads(scripted.group(2))
            except ValueError:
                return {"text": "fake-model: CALL_TOOL arguments are not one JSON object"}
            if found is None:
                return {"text": f"fake-model: CALL_TOOL but no tool ending in {scripted.group(1)}"}
            return call(found, args)
        echo = CALL_ECHO.search(user_text)
        if echo:
            found = responses_tool_ending(body, "echo")
            if found is None:
                return {"text": "fake-model: CALL_ECHO but no tool ending in echo was offered"}
            return call(found, {"text": echo.group(1)})
        shell = CALL_SHELL.search(user_text)
        if shell:
            found = responses_tool_ending(body, "exec_command")
            if found is None:
                return {"text": "fake-model: CALL_SHELL but no exec_command tool was offered"}
            cmd = shell.group(2).strip()
            args = {"cmd": cmd}
            if shell.group(1):
                args.update(sandbox_permissions="require_escalated",
                            justification=f"test wants to run {cmd}")
            return call(found, args)
        n = self.model.next_reply_number()
        return {"text": f"fake-reply-{n}: {user_text[-TEXT_TAIL:]}"}

    def _answer_responses(self, body, reply):
        response_id = "resp_fake_" + secrets.token_hex(6)
        model = body.get("model") or "fake-model"
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 15}
        if "call" in reply:
            item_id = "fc_fake_" + secrets.token_hex(5)
            done_item = dict(reply["call"], type="function_call", id=item_id,
                             call_id="call_fake_" + secrets.token_hex(5), status="completed")
        else:
            item_id = "msg_fake_" + secrets.token_hex(5)
            done_item = {"type": "message", "id": item_id, "status": "completed",
                         "role": "assistant",
                         "content": [{"type": "output_text", "text": reply["text"],
                                      "annotations": []}]}

        def response(status, output):
            return {"id": response_id, "object": "response", "created_at": int(time.time()),
                    "status": status, "model": model, "output": output,
                    "usage": usage if status == "completed" else None}

        if not body.get("stream"):
            self._send_json(200, response("completed", [done_item]))
            return

        events = [{"type": "response.created", "response": response("in_progress", [])},
                  {"type": "response.in_progress", "response": response("in_progress", [])}]
        where = {"item_id": item_id, "output_index": 0}
        if done_item["type"] == "function_call":
            events.append({"type": "response.output_item.added", "output_index": 0,
                           "item": dict(done_item, arguments="", status="in_progress")})
            for part in chunks(done_item["arguments"], DELTA_CHARS):
                events.append(dict(where, type="response.function_call_arguments.delta",
                                   delta=part))
            events.append(dict(where, type="response.function_call_arguments.done",
                               arguments=done_item["arguments"]))
        else:
            text = reply["text"]
            events.append({"type": "response.output_item.added", "output_index": 0,
                           "item": dict(done_item, status="in_progress", content=[])})
            events.append(dict(where, type="response.content_part.added", content_index=0,
                               part={"type": "output_text", "text": "", "annotations": []}))
            for part in chunks(text, DELTA_CHARS):
                events.append(dict(where, type="response.output_text.delta", content_index=0,
                                   delta=part))
            events.append(dict(where, type="response.output_text.done", content_index=0,
                               text=text))
            events.append(dict(where, type="response.content_part.done", content_index=0,
                               part={"type": "output_text", "text": text, "annotations": []}))
        events.append({"type": "response.output_item.done", "output_index": 0,
                       "item": done_item})
        events.append({"type": "response.completed", "response": response("completed",
                                                                          [done_item])})

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for seq, event in enumerate(events):
                self.wfile.write(sse_data(dict(event, sequence_number=seq)))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (an interrupt); nothing to answer

    # --- POST /v1/chat/completions ---

    def _post_chat(self):
        record = {"ts": time.time(), "method": "POST", "path": self.path,
                  "headers": {k: self.headers[k] for k in CHAT_LOGGED_HEADERS
                              if self.headers.get(k) is not None}}
        try:
            body = json.loads(self._read_body() or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except (ValueError, UnicodeDecodeError) as e:
            record.update(status=400, error=f"bad request body: {e}")
            self.model.log(record)
            self._send_openai_error(400, f"fake model: bad request body: {e}")
            return

        user_text, tool_result = last_chat_turn(body)
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        record.update(model=body.get("model"), stream=bool(body.get("stream")),
                      messages=len(messages),
                      roles=[m.get("role") for m in messages if isinstance(m, dict)],
                      tools=chat_tool_names(body), user_text=user_text)
        if self.model.delay_s > 0:
            time.sleep(self.model.delay_s)

        status = self.model.forced_status
        if (status is None and tool_result is None and "FAKE_MODEL_CONTEXT" in user_text
                and "<conversation>" not in user_text):
            record.update(status=400, reply="context_length_exceeded")
            self.model.log(record)
            self._send_json(400, CONTEXT_LENGTH_ERROR)
            return
        if status is None and tool_result is None:
            if "FAKE_MODEL_500" in user_text:
                status = 500
            elif "FAKE_MODEL_400" in user_text:
                status = 400
        if status is not None:
            record.update(status=status, reply=f"fake forced error {status}")
            self.model.log(record)
            self._send_openai_error(status, f"fake forced error {status}")
            return

        reply = self._choose_chat_reply(body, user_text, tool_result)
        record.update(status=200, reply=reply)
        self.model.log(record)
        self._answer_chat(body, reply)

    def _choose_chat_reply(self, body, user_text, tool_result):
        """{"text": …} or {"call": {"id", "name", "arguments"}}."""
        def call(name, args):
            return {"call": {"id": "call_fake_" + secrets.token_hex(5), "name": name,
                             "arguments": json.dumps(args)}}

        if tool_result is not None:
            return {"text": f"TOOL_RESULT_SEEN: {tool_result}"}
        scripted = CALL_TOOL.search(user_text)
        if scripted:
            tool = chat_tool_ending(body, scripted.group(1))
            try:
                args = json.loads(scripted.group(2))
            except ValueError:
                return {"text": "fake-model: CALL_TOOL arguments are not one JSON object"}
            if tool is None:
                return {"text": f"fake-model: CALL_TOOL but no tool ending in {scripted.group(1)}"}
            return call(tool, args)
        echo = CALL_ECHO.search(user_text)
        if echo:
            tool = chat_tool_ending(body, "echo")
            if tool is None:
                return {"text": "fake-model: CALL_ECHO but no tool ending in echo was offered"}
            return call(tool, {"text": echo.group(1)})
        n = self.model.next_reply_number()
        return {"text": f"fake-reply-{n}: {user_text[-TEXT_TAIL:]}"}

    def _answer_chat(self, body, reply):
        completion_id = "chatcmpl-fake-" + secrets.token_hex(6)
        model = body.get("model") or "fake-model"
        created = int(time.time())
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if "call" in reply:
            c = reply["call"]
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": c["id"], "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]}}]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": reply["text"]}
            finish = "stop"

        def chunk(delta, finish_reason=None):
            return {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                    "model": model, "choices": [{"index": 0, "delta": delta,
                                                 "finish_reason": finish_reason}]}

        if not body.get("stream"):
            self._send_json(200, {"id": completion_id, "object": "chat.completion",
                                  "created": created, "model": model,
                                  "choices": [{"index": 0, "message": message,
                                               "finish_reason": finish}],
                                  "usage": usage})
            return

        if "call" in reply:
            c = reply["call"]
            events = [chunk({"role": "assistant", "content": None, "tool_calls": [{
                "index": 0, "id": c["id"], "type": "function",
                "function": {"name": c["name"], "arguments": ""}}]})]
            for part in chunks(c["arguments"], DELTA_CHARS):
                events.append(chunk({"tool_calls": [{"index": 0,
                                                     "function": {"arguments": part}}]}))
        else:
            events = [chunk({"role": "assistant", "content": ""})]
            for part in chunks(reply["text"], DELTA_CHARS):
                events.append(chunk({"content": part}))
        events.append(chunk({}, finish))
        events.append({"id": completion_id, "object": "chat.completion.chunk",
                       "created": created, "model": model, "choices": [], "usage": usage})

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for event in events:
                self.wfile.write(sse_chat(event))
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (an abort); nothing to answer


def main():
    env = os.environ
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--log", default=env.get("FAKE_LOG"), help="append one JSON line per request")
    parser.add_argument("--delay-s", type=float, default=float(env.get("FAKE_DELAY_S") or 0),
                        help="answer every model request this many seconds late")
    parser.add_argument("--status", type=int,
                        default=int(env["FAKE_STATUS"]) if env.get("FAKE_STATUS") else None,
                        help="answer every model request with this HTTP error status")
    args = parser.parse_args()

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    server.fake_model = FakeModel(args.log, args.delay_s, args.status)

    def stop(signum, frame):
        # shutdown() waits for serve_forever(), which runs on this (the main) thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    print(f"listening on {host}:{port}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
