// The OpenCode driver (driver_impl.h): the server process, HTTP requests, the event stream
// loop, the session, and launch.
#include <csignal>
#include <cstdlib>

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/ids.h"
#include "base/log.h"
#include "runtime/opencode/driver_impl.h"

namespace shoal::runtime {
namespace opencode_detail {
namespace {

// A free loopback port (bound, read, released: the server binds it right after).
Result<int> freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unavailable("no-free-port", "cannot open a socket to find a free port");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  if (port == 0) return unavailable("no-free-port", "cannot find a free loopback port");
  return port;
}

// The OPENCODE_CONFIG_CONTENT the server gets: the user's (when the profile passes that
// variable) with `mcp.shoal` set to the seat's endpoint. That variable outranks OPENCODE_CONFIG
// and the project's opencode.json, and OpenCode deep-merges `mcp` across them, so the user's
// other servers stay and no project file can replace the seat's.
Result<std::string> seatConfigContent(const LaunchSpec& spec) {
  json::object config;
  const char* user = std::getenv(kConfigContent);
  const bool passed = std::find(spec.envAllowList.begin(), spec.envAllowList.end(),
                                kConfigContent) != spec.envAllowList.end();
  if (passed && user != nullptr && *user != '\0') {
    boost::system::error_code ec;
    json::value v = json::parse(user, ec);
    if (ec || !v.is_object()) {
      return invalidArgument(
          "bad-opencode-config",
          fmt::format("{} (passed through the seat's env) is not a JSON object", kConfigContent));
    }
    config = std::move(v.as_object());
  }
  json::object headers{{"Authorization", "Bearer " + spec.mcp->bearerToken}};
  // oauth:false: a refused token is reported at once instead of walking OAuth discovery.
  json::object shoal{{"type", "remote"},
                     {"url", spec.mcp->url},
                     {"headers", std::move(headers)},
                     {"oauth", false},
                     {"enabled", true}};
  json::value& mcp = config["mcp"];
  if (!mcp.is_object()) mcp = json::object();
  mcp.as_object()["shoal"] = std::move(shoal);
  return json::serialize(config);
}

}  // namespace

std::string OpenCodeDriver::sessionId() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_;
}

void OpenCodeDriver::closeInput() {
  stopEvents();  // the stream ends with the server: not a fault now
  // `opencode serve` does not read stdin: a graceful stop is SIGTERM.
  (void)child_->signalGroup(SIGTERM);
}

void OpenCodeDriver::kill(std::chrono::milliseconds grace) {
  stopEvents();
  ChildDriver::kill(grace);
}

StdinWrite OpenCodeDriver::handoff(const Handoff& handoff) {
  std::string session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_ || retired_) {
      return {0, failedPrecondition("runtime-not-ready", "the OpenCode server is not ready")};
    }
    if (summarize_) {
      return {0, failedPrecondition("runtime-compacting",
                                    "the OpenCode session is being summarized; no prompt")};
    }
    if (runner_) {
      return {0, failedPrecondition("runner-unresolved",
                                    "the previous prompt " + runner_->messageId +
                                        " has not been answered; no second prompt")};
    }
    session = session_;
  }
  auto id = mintOpenCodeMessageId();
  if (!id.isOk()) return {0, id.status()};
  {
    // The admission reservation goes in before the mutation: its events may come first.
    std::lock_guard<std::mutex> lock(mu_);
    Runner r;
    r.handoffId = handoff.handoffId;
    r.messageId = *id;
    r.parents.insert(*id);
    r.admitBy = Clock::now() + spec_.admissionWatchdog;
    runner_ = std::move(r);
  }
  appendToLog(fmt::format("[shoal] prompt_async {} for handoff {}\n", *id, handoff.handoffId));
  auto reply = request("POST", "/session/" + session + "/prompt_async",
                       openCodePromptBody(*id, handoff.text));
  const size_t all = handoff.text.size();
  if (!reply.isOk()) {
    if (reply.status().reason() == "http-connect-failed") {
      dropRunner(*id);
      return {0, reply.status()};  // nothing was sent
    }
    return {all, reply.status()};  // it may have been acted on: the reservation stays
  }
  if (reply->status == 204 || reply->status == 200) return {all, Status::ok()};
  const std::string detail =
      fmt::format("prompt_async answered HTTP {}: {}", reply->status, reply->body.substr(0, 300));
  if (reply->status >= 400 && reply->status < 500) {
    dropRunner(*id);
    return {0, failedPrecondition("opencode-refused-prompt", detail)};
  }
  return {all, unavailable("opencode-prompt-failed", detail)};
}

std::string OpenCodeDriver::readOutput(UniqueFd out) {
  std::string fault =
      readLines(std::move(out), "stdout of opencode serve (pid " + std::to_string(pid()) + ")",
                [this](const std::string& line) {
                  const size_t at = line.find(kListening);
                  std::lock_guard<std::mutex> lock(mu_);
                  if (at == std::string::npos || eventsStarted_) return std::string();
                  std::string url = line.substr(at + kListening.size());
                  while (!url.empty() && (url.back() == '/' || url.back() == ' '))
                    url.pop_back();
                  baseUrl_ = url;
                  eventsStarted_ = true;
                  events_ = std::thread([this] { eventsMain(); });
                  return std::string();
                });
  // The server is gone: the event thread ends before kExited is reported, so no event of this
  // generation follows it.
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  if (stream_) stream_->close();
  eventsDone_.wait(lock, [this] { return !eventsStarted_ || eventsExited_; });
  if (!fault.empty()) return fault;
  return retireReason_;
}

Result<http::HttpReply> OpenCodeDriver::request(const std::string& method, const std::string& path,
                                                std::string body, milliseconds timeout) {
  std::string base;
  {
    std::lock_guard<std::mutex> lock(mu_);
    base = baseUrl_;
  }
  http::HttpClientOptions o;
  o.connectTimeout = kConnectTimeout;
  o.responseTimeout = timeout;
  o.cancelled = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  };
  SHOAL_ASSIGN_OR_RETURN(auto client, http::HttpClient::forUrl(base + path, o));
  http::HttpCall call;
  call.method = method;
  call.headers.push_back({"Accept", "application/json"});
  call.headers.push_back({"Authorization", authorization_});
  if (!body.empty() || method == "POST") {
    call.headers.push_back({"Content-Type", "application/json"});
    call.body = body.empty() ? "{}" : std::move(body);
  }
  return client.send(call);
}

void OpenCodeDriver::dropRunner(const std::string& messageId) {
  std::lock_guard<std::mutex> lock(mu_);
  if (runner_ && runner_->messageId == messageId) runner_.reset();
}

void OpenCodeDriver::retire(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (retired_) return;
    retired_ = true;
    stopping_ = true;
    retireReason_ = "retired: " + why;
  }
  log::warn("opencode serve (pid {}): retiring the generation: {}", pid(), why);
  appendToLog("[shoal] retiring this OpenCode server: " + why + "\n");
  (void)child_->signalGroup(SIGKILL);
}

void OpenCodeDriver::stopEvents() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  if (stream_) stream_->close();
}

bool OpenCodeDriver::stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void OpenCodeDriver::eventsMain() {
  run();
  std::lock_guard<std::mutex> lock(mu_);
  eventsExited_ = true;
  eventsDone_.notify_all();
}

void OpenCodeDriver::run() {
  std::string base;
  {
    std::lock_guard<std::mutex> lock(mu_);
    base = baseUrl_;
  }
  const auto setupBy = Clock::now() + kSetupBudget;
  std::unique_ptr<http::EventStream> stream;
  std::string lastError;
  while (!stream && !stopping()) {
    http::EventStreamOptions so;
    so.connectTimeout = kConnectTimeout;
    so.headTimeout = milliseconds(5000);
    so.headers = {{"Authorization", authorization_}};
    auto opened = http::EventStream::open(base + "/event", so);
    if (opened.isOk()) {
      // Its first frame (server.connected) proves it live; only then may prompts go out.
      auto first = (*opened)->next(milliseconds(5000));
      if (first.isOk() && first->has_value()) {
        auto e = parseOpenCodeEvent(**first);
        if (e.isOk() && e->kind == OpenCodeEvent::Kind::kConnected) {
          stream = std::move(*opened);
          break;
        }
        lastError = "the first event was not server.connected: " + first->value().substr(0, 200);
      } else {
        lastError = first.isOk() ? "no first event in 5 s" : first.status().toString();
      }
    } else {
      lastError = opened.status().toString();
    }
    if (Clock::now() >= setupBy) {
      return retire("could not open its event stream: " + lastError);
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
  if (!stream) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stream_ = stream.get();
  }
  struct Detach {
    OpenCodeDriver* d;
    ~Detach() {
      std::lock_guard<std::mutex> lock(d->mu_);
      d->stream_ = nullptr;
    }
  } detach{this};
  if (!openSession()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_ = true;
  }
  DriverEvent ready;
  ready.kind = DriverEvent::Kind::kReady;
  emit(std::move(ready));

  auto lastFrame = Clock::now();
  while (!stopping()) {
    auto next = stream->next(kPollSlice);
    if (!next.isOk()) {
      if (stopping()) return;
      return retire("its event stream was lost (" + next.status().toString() +
                    "); the stream has no replay, so this server can no longer prove delivery");
    }
    if (next->has_value()) {
      lastFrame = Clock::now();
      auto e = parseOpenCodeEvent(**next);
      if (!e.isOk()) {
        appendToLog("[shoal] ignored: " + e.status().toString() + "\n");
      } else {
        on(*e);
      }
    } else if (Clock::now() - lastFrame > kSilence) {
      return retire(fmt::format("its event stream was silent for {} s", kSilence.count() / 1000));
    }
    watchdog();
  }
}

bool OpenCodeDriver::openSession() {
  if (!spec_.resumeSession.empty()) {
    auto got = request("GET", "/session/" + spec_.resumeSession);
    if (got.isOk() && got->status == 200) {
      appendToLog("[shoal] session " + spec_.resumeSession + " resumed\n");
      std::lock_guard<std::mutex> lock(mu_);
      session_ = spec_.resumeSession;
      rememberSessionModel(got->body);
      return true;
    }
    if (!got.isOk() || (got->status != 404 && got->status != 410)) {
      retire("could not check the saved session " + spec_.resumeSession + ": " +
             (got.isOk() ? fmt::format("HTTP {} {}", got->status, got->body.substr(0, 200))
                         : got.status().toString()));
      return false;
    }
    // Seed 004 §2: HTTP 404/410 is OpenCode's typed "no such session"; one fresh session.
    const std::string detail = fmt::format(
        "provider_session_fresh_fallback: opencode answered HTTP {} for session {}; starting "
        "a fresh session (attempt 1)",
        got->status, spec_.resumeSession);
    DriverEvent e;
    e.kind = DriverEvent::Kind::kCondition;
    e.detail = detail;
    e.condition =
        condition(wire::ConditionCode::kRetrying, "provider_session_fresh_fallback", detail);
    emit(std::move(e));
  }
  json::object body{{"title", title_}};
  auto made = request("POST", "/session", json::serialize(body));
  std::string id;
  if (made.isOk() && made->status == 200) {
    boost::system::error_code ec;
    json::value v = json::parse(made->body, ec);
    if (!ec && v.is_object()) {
      if (const auto* s = v.as_object().if_contains("id"); s != nullptr && s->is_string()) {
        id = std::string(s->as_string());
      }
    }
  }
  if (id.rfind("ses", 0) != 0) {
    retire("could not create a session: " +
           (made.isOk() ? fmt::format("HTTP {} {}", made->status, made->body.substr(0, 200))
                        : made.status().toString()));
    return false;
  }
  appendToLog("[shoal] session " + id + " created\n");
  std::lock_guard<std::mutex> lock(mu_);
  session_ = id;
  return true;
}

void OpenCodeDriver::rememberSessionModel(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return;
  const auto* model = v.as_object().if_contains("model");
  if (model == nullptr || !model->is_object()) return;
  const auto* id = model->as_object().if_contains("id");
  const auto* provider = model->as_object().if_contains("providerID");
  if (id == nullptr || !id->is_string() || provider == nullptr || !provider->is_string()) return;
  modelId_ = std::string(id->as_string());
  providerId_ = std::string(provider->as_string());
}

}  // namespace opencode_detail

using namespace opencode_detail;  // the driver's parts (driver_impl.h)

std::vector<std::string> openCodeArgv(const LaunchSpec& spec, int port) {
  std::vector<std::string> argv = spec.command;
  if (argv.empty()) argv = {"opencode", "serve"};
  argv.insert(argv.end(), {"--port", std::to_string(port), "--hostname", "127.0.0.1"});
  return argv;
}

Result<std::unique_ptr<RuntimeDriver>> launchOpenCodeDriver(LaunchSpec spec) {
  std::string config;
  if (spec.mcp) {
    SHOAL_ASSIGN_OR_RETURN(config, seatConfigContent(spec));
  }
  SHOAL_ASSIGN_OR_RETURN(const int port, freeLoopbackPort());
  // Without a password the server is open to anything on loopback (its /config would show the
  // seat's token): one per generation, sent as basic auth on every request.
  SHOAL_ASSIGN_OR_RETURN(const std::string password, newHexToken(16));
  auto argv = openCodeArgv(spec, port);
  std::string title = "Shoal seat " + spec.seatId;
  auto driver = std::make_unique<OpenCodeDriver>(
      std::move(spec), std::move(title),
      "Basic " + base64Encode(std::string(kUser) + ":" + password));
  driver->extraEnv_.emplace_back("OPENCODE_SERVER_PASSWORD", password);
  driver->extraEnv_.emplace_back("OPENCODE_SERVER_USERNAME", std::string(kUser));
  if (!config.empty()) driver->extraEnv_.emplace_back(kConfigContent, config);
  // A daemon-run server must not replace itself under the seat.
  driver->extraEnv_.emplace_back("OPENCODE_DISABLE_AUTOUPDATE", "1");
  SHOAL_RETURN_IF_ERROR(driver->spawn(std::move(argv)));
  return std::unique_ptr<RuntimeDriver>(std::move(driver));
}

}  // namespace shoal::runtime
