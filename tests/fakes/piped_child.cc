#include "piped_child.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace shoal::testing {

std::unique_ptr<PipedChild> PipedChild::start(const std::vector<std::string>& argv,
                                              const std::string& stderrPath) {
  // A child that dies must not kill the test with SIGPIPE when the test writes to it.
  std::signal(SIGPIPE, SIG_IGN);
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return nullptr;
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, stderrPath.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    std::fprintf(stderr, "posix_spawn(%s): %s\n", argv[0].c_str(), std::strerror(rc));
    ::close(in[1]);
    ::close(out[0]);
    return nullptr;
  }

  std::unique_ptr<PipedChild> child(new PipedChild());
  child->pid_ = pid;
  child->stdinFd_ = in[1];
  child->stdoutFd_ = out[0];
  PipedChild* self = child.get();
  child->reader_ = std::thread([self] {
    std::string pending;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(self->stdoutFd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl = pending.find('\n'); nl != std::string::npos;
           nl = pending.find('\n', start)) {
        std::string line = pending.substr(start, nl - start);
        {
          std::lock_guard lock(self->mu_);
          self->seen_.push_back(line);
        }
        self->lines_.push(std::move(line));
        start = nl + 1;
      }
      pending.erase(0, start);
    }
    if (!pending.empty()) {
      {
        std::lock_guard lock(self->mu_);
        self->seen_.push_back(pending);
      }
      self->lines_.push(std::move(pending));
    }
    self->lines_.push(std::nullopt);
  });
  return child;
}

PipedChild::~PipedChild() {
  if (!exit_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  closeStdin();
  if (reader_.joinable()) reader_.join();
  if (stdoutFd_ >= 0) ::close(stdoutFd_);
}

bool PipedChild::write(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    if (stdinFd_ < 0) return false;
    ssize_t n = ::write(stdinFd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

size_t PipedChild::writeUntilFull(const std::string& chunk, size_t maxBytes) {
  if (stdinFd_ < 0 || chunk.empty()) return 0;
  ::fcntl(stdinFd_, F_SETFL, ::fcntl(stdinFd_, F_GETFL) | O_NONBLOCK);
  size_t total = 0;
  while (total < maxBytes) {
    ssize_t n = ::write(stdinFd_, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: full
    total += static_cast<size_t>(n);
  }
  return total;
}

void PipedChild::closeStdin() {
  if (stdinFd_ >= 0) ::close(stdinFd_);
  stdinFd_ = -1;
}

std::optional<std::string> PipedChild::nextLine(std::chrono::milliseconds timeout) {
  if (ended_) return std::nullopt;
  auto line = lines_.pop(timeout);
  if (!line) return std::nullopt;
  if (!*line) {
    ended_ = true;
    return std::nullopt;
  }
  return std::move(**line);
}

std::optional<boost::json::object> PipedChild::nextObject(std::chrono::milliseconds timeout) {
  auto line = nextLine(timeout);
  if (!line) return std::nullopt;
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(*line, ec);
  if (ec || !value.is_object()) return std::nullopt;
  return std::move(value.as_object());
}

std::optional<boost::json::object> PipedChild::nextOfType(const std::string& type,
                                                          const std::string& subtype,
                                                          std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) return std::nullopt;
    auto line = nextLine(left);
    if (!line) return std::nullopt;
    boost::system::error_code ec;
    boost::json::value value = boost::json::parse(*line, ec);
    if (ec || !value.is_object()) continue;
    const boost::json::object& object = value.as_object();
    const auto* t = object.if_contains("type");
    if (t == nullptr || !t->is_string() || t->as_string() != type) continue;
    if (!subtype.empty()) {
      const auto* s = object.if_contains("subtype");
      if (s == nullptr || !s->is_string() || s->as_string() != subtype) continue;
    }
    return object;
  }
}

bool PipedChild::outputEnds(std::chrono::milliseconds timeout) {
  if (ended_) return true;
  auto line = lines_.pop(timeout);
  if (line && !*line) {
    ended_ = true;
    return true;
  }
  return false;
}

std::optional<ExitStatus> PipedChild::waitExit(std::chrono::milliseconds timeout) {
  if (exit_) return exit_;
  int status = 0;
  bool done = eventually(
      [&] {
        pid_t r = ::waitpid(pid_, &status, WNOHANG);
        return r == pid_;
      },
      timeout);
  if (!done) return std::nullopt;
  ExitStatus exit;
  if (WIFEXITED(status)) {
    exit.exited = true;
    exit.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  }
  exit_ = exit;
  return exit_;
}

void PipedChild::signal(int sig) {
  if (!exit_ && pid_ > 0) ::kill(pid_, sig);
}

std::string PipedChild::transcript() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const std::string& line : seen_) {
    out += line + "\n";
  }
  return out;
}

}  // namespace shoal::testing
