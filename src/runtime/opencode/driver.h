// The `opencode` runtime driver (server.cc, runner.cc, fences.cc over driver_impl.h): `opencode
// serve` on 127.0.0.1, spoken to over HTTP with its `GET /event` SSE stream as the only
// evidence of what it did (docs/daemon.md, Runtimes; seed 004 §1.1, §2, §3 "OpenCode does not
// declare active-turn delivery").
//
// Launch: the server is started on a free loopback port and awaited until its stdout line
// `opencode server listening on http://…` (an HTTP connection made while it starts can hang);
// every request has a timeout. Then `GET /event` is opened (until its first frame, setup may be
// retried; after it, a lost stream retires the generation — there is no replay cursor), and the
// seat's saved session is checked with `GET /session/:id` (HTTP 404/410 only: one fresh
// session, a `retrying` condition `provider_session_fresh_fallback`) or one is created. That is
// the readiness handshake (kReady).
//
// Handoffs (only at an idle boundary: the seat keeps active-turn input in its journal):
// a fresh daemon-minted `messageID` (events.h) and one `prompt_async`. A Runner-
// admission reservation is installed before the request and kept until `busy` / `retry` or
// the assistant whose `parentID` is that id. kAck = that exact-parent assistant (the user
// message echo is only persistence evidence). kTurnStarted = admission. kTurnEnded = the idle
// that follows an acknowledged Runner; an idle before admission changes nothing. Activity is
// counted only for assistants admitted to the current Runner, so stale frames (a background
// `compaction.prune` of an old tool part) never look like work. `session.error` is a
// nonterminal condition; an error that survives to idle fails the turn and retires the
// generation. An automatic compaction (`compaction` part with auto:true on a user message of the
// admitted Runner) moves the correlation to that compaction user.
//
// Retirement (the server is killed, kExited carries the reason; the seat fails whatever was
// unacknowledged — OpenCode is acknowledgement-only, nothing is replayed): the event stream
// lost or silent for 35 s after readiness; idle after admission with no exact-parent
// assistant; the admission watchdog (`LaunchSpec::admissionWatchdog`) expiring with no busy,
// retry or exact-parent assistant; model retries bounded (6 `retry` statuses or 2 minutes —
// OpenCode retries a 5xx forever), reported as a failed turn first; an error after the turn was
// over; a refused session.
//
// The server's environment: OPENCODE_SERVER_PASSWORD, fresh per generation (every request,
// the event stream included, carries it as basic auth; without one anything on loopback could
// read the server's config, the seat's token in it), OPENCODE_DISABLE_AUTOUPDATE=1, and with
// the seat's MCP endpoint OPENCODE_CONFIG_CONTENT = the user's (when the profile passes that
// variable) plus `mcp.shoal = {type:"remote", url, headers:{Authorization}, oauth:false}`.
// That variable outranks OPENCODE_CONFIG and the project's opencode.json, and `mcp` is merged
// key by key across them (checked on the real 1.18.33).
//
// Compaction (compact(), `shoal seat compact`, decision 011): `POST /session/:id/summarize
// {providerID, modelID, auto:false}` with the session's model, on a thread of its own (the call
// answers only when the work is over). The summarize fence completes — one kTurnEnded — only
// when the call answered `true` and the stream showed the auto:false compaction part, the
// summary assistant bound to it completed, `session.compacted` and the idle after it; any error,
// an idle before `session.compacted`, endless retries or a non-`true` answer end it
// `context_compaction_failed` and retire the generation. No prompt goes out while it runs.
//
// Context overflow under `compaction.auto=false` (ContextOverflowError): the processor's idle
// starts the cleanup drain, the errored exact-parent assistant proves it, the Runner's idle
// ends the turn in error (`context_overflow: …`) and the server stays. A session.idle right
// after an idle status is the same idle.
//
// Native interrupt (interrupt(), decision 012): refused until the run took the prompt (its
// exact-parent assistant exists); `POST /abort`; the turn ends at the first idle after that
// assistant completed with MessageAbortedError, then the generation retires (OpenCode aborts
// a run started soon after an abort too).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/driver.h"

namespace shoal::runtime {

// Acknowledged handoffs (the exact-parent assistant), a readiness handshake (the event stream
// and the session), compaction (summarize), interrupt (abort), resumable sessions; no input
// mid-turn and no read-back.
inline constexpr RuntimeTraits kOpenCodeTraits{
    .needsReady = true, .compacts = true, .interrupts = true, .resumesSessions = true};

// The command (default `opencode serve`) plus `--port <port> --hostname 127.0.0.1`.
std::vector<std::string> openCodeArgv(const LaunchSpec& spec, int port);

Result<std::unique_ptr<RuntimeDriver>> launchOpenCodeDriver(LaunchSpec spec);

}  // namespace shoal::runtime
