// shoal-ack: acknowledges messages from inside the program of an exec seat added with
// `shoal seat add --ack` (docs/daemon.md, "Acknowledging exec programs"). Such a program finds
// a pipe to its daemon in $SHOAL_ACK_FD; `shoal-ack <id>…` writes one `ack <id>` line per id
// there, each in one write(2) (atomic: a line is far below PIPE_BUF), so concurrent helpers
// never interleave. The id is the message id as the block's head shows it after ", id ".
//
//   shoal-ack [--json] <id>…     exit 0: every line written; 1: a write failed; 2: usage
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

constexpr size_t kMaxIdBytes = 1000;  // the daemon reads lines of at most 1 KiB

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int fail(bool json, int code, std::string_view reason, const std::string& message) {
  if (json) {
    std::printf("{\"ok\":false,\"error\":{\"reason\":%s,\"message\":%s}}\n",
                jsonString(reason).c_str(), jsonString(message).c_str());
  } else {
    std::fprintf(stderr, "✗ shoal-ack: %s\n", message.c_str());
  }
  return code;
}

bool validId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) return false;
  for (char c : id) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ' ' || u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

// Writes `line` whole in one write(2); errno on failure.
int writeLine(int fd, const std::string& line) {
  for (;;) {
    const ssize_t n = ::write(fd, line.data(), line.size());
    if (n == static_cast<ssize_t>(line.size())) return 0;
    if (n < 0 && errno == EINTR) continue;
    return n < 0 ? errno : EIO;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::vector<std::string> ids;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "-h" || arg == "--help") {
      std::printf(
          "usage: shoal-ack [--json] <message id>...\n"
          "Acknowledges messages from the program of an exec seat added with `shoal seat add "
          "--ack`:\nwrites `ack <id>` to $SHOAL_ACK_FD for each id, as the delivery block shows "
          "it after \", id \".\nA message is surfaced only once it is acknowledged.\n");
      return 0;
    } else {
      ids.emplace_back(arg);
    }
  }
  if (ids.empty()) return fail(json, 2, "usage", "usage: shoal-ack [--json] <message id>...");
  for (const auto& id : ids) {
    if (!validId(id)) {
      return fail(json, 2, "bad-ack-id",
                  "`" + id +
                      "` is not a message id as a delivery block shows one (1-1000 bytes, no "
                      "spaces or control characters)");
    }
  }
  const char* env = std::getenv("SHOAL_ACK_FD");
  if (env == nullptr || *env == '\0') {
    return fail(json, 2, "no-ack-fd",
                "$SHOAL_ACK_FD is not set: run shoal-ack from the program of an exec seat added "
                "with `shoal seat add --ack`");
  }
  char* end = nullptr;
  const long fd = std::strtol(env, &end, 10);
  if (*end != '\0' || fd < 0 || fd > 65535) {
    return fail(json, 2, "bad-ack-fd",
                std::string("$SHOAL_ACK_FD is `") + env + "`, not a descriptor number");
  }
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe is EPIPE, reported below
  std::string acked;
  for (const auto& id : ids) {
    if (int e = writeLine(static_cast<int>(fd), "ack " + id + "\n"); e != 0) {
      const std::string why =
          e == EPIPE ? "the daemon no longer reads this runtime's acknowledgements (the runtime "
                       "was stopped or replaced): the message will be failed, not surfaced"
                     : std::strerror(e);
      return fail(json, 1, e == EPIPE ? "ack-pipe-closed" : "ack-write-failed",
                  "cannot acknowledge " + id + " on fd " + env + ": " + why);
    }
    acked += (acked.empty() ? "" : ",") + jsonString(id);
  }
  if (json) std::printf("{\"ok\":true,\"acked\":[%s]}\n", acked.c_str());
  return 0;
}
