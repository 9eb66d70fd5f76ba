// fake_stdin_agent: a test fake of a raw-stdin ("exec" runtime) agent. It reads stdin line by
// line (lines of any length) and appends each line to a log, so a test can see exactly what
// the seat daemon wrote to the runtime's stdin.
//
//   fake_stdin_agent --log PATH [--stop-reading-after N] [--exit-after N] [--read-pause-ms N]
//
// Switches (`--switch=value` works too):
//   --log PATH               append {"pid":N,"line":"<the line, without its line feed>"} per
//                            line, each with ONE write() on an O_APPEND descriptor (concurrent
//                            agents never interleave). Without --log the lines are dropped.
//   --stop-reading-after N   after N lines, stop reading stdin but stay alive until killed, so
//                            the pipe fills up (stdin backpressure tests). It reads in chunks
//                            of at most 4 KiB, so a few bytes past line N may have left the pipe.
//   --exit-after N           exit 0 right after logging line N (0: at once).
//   --read-pause-ms N        wait N ms before each read of stdin, so what the daemon wrote
//                            waits in the pipe for a while (crash tests: a kill lands while
//                            deliveries are written but not yet read).
// At stdin EOF it logs a partial last line, if any, and exits 0. Bad switches: exit 2.
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include <boost/json.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

namespace {

struct Options {
  std::string logPath;
  std::optional<long> stopReadingAfter;
  std::optional<long> exitAfter;
  long readPauseMs = 0;
};

std::optional<long> count(const std::string& text) {
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 0) return std::nullopt;
  return n;
}

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    if (!value) {
      if (i + 1 >= argc) {
        fmt::print(stderr, "fake_stdin_agent: {} needs a value\n", arg);
        return false;
      }
      value = argv[++i];
    }
    if (arg == "--log") {
      options.logPath = *value;
    } else if (arg == "--stop-reading-after" || arg == "--exit-after" || arg == "--read-pause-ms") {
      std::optional<long> n = count(*value);
      if (!n) {
        fmt::print(stderr, "fake_stdin_agent: {} wants a count, got '{}'\n", arg, *value);
        return false;
      }
      if (arg == "--read-pause-ms") {
        options.readPauseMs = *n;
      } else {
        (arg == "--exit-after" ? options.exitAfter : options.stopReadingAfter) = n;
      }
    } else {
      fmt::print(stderr, "fake_stdin_agent: unknown switch {}\n", arg);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) return 2;
  int logFd = -1;
  if (!options.logPath.empty()) {
    logFd = ::open(options.logPath.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (logFd < 0) {
      fmt::print(stderr, "fake_stdin_agent: cannot open {}\n", options.logPath);
      return 2;
    }
  }
  if (options.exitAfter && *options.exitAfter == 0) return 0;
  const pid_t pid = ::getpid();
  long lines = 0;
  // Logs one line; false when the process should stop reading (or has exited).
  auto onLine = [&](const std::string& line) -> bool {
    if (logFd >= 0) {
      boost::json::object entry{{"pid", pid}, {"line", line}};
      std::string text = boost::json::serialize(entry) + "\n";
      ssize_t n = ::write(logFd, text.data(), text.size());
      static_cast<void>(n);
    }
    ++lines;
    if (options.exitAfter && lines >= *options.exitAfter) std::exit(0);
    return !(options.stopReadingAfter && lines >= *options.stopReadingAfter);
  };

  bool reading = !(options.stopReadingAfter && *options.stopReadingAfter == 0);
  std::string pending;
  char buf[4096];
  while (reading) {
    if (options.readPauseMs > 0) ::usleep(static_cast<useconds_t>(options.readPauseMs * 1000));
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!pending.empty()) onLine(pending);
      return 0;
    }
    const size_t scanned = pending.size();  // holds no line feed
    pending.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl = pending.find('\n', scanned); nl != std::string::npos && reading;
         nl = pending.find('\n', start)) {
      reading = onLine(pending.substr(start, nl - start));
      start = nl + 1;
    }
    pending.erase(0, start);
  }
  for (;;) {
    ::pause();  // alive, not reading, until killed
  }
}
