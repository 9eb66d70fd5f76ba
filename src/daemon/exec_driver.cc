// The `exec` driver: any program that reads its prompts on stdin. Each handoff is the delivery
// block followed by one newline. A complete write is only transport acceptance (the bytes may
// wait in the pipe, and die with the program): the surfaced boundary is the program reading
// the handoff's last byte. The driver knows it from the pipe itself — the bytes it wrote minus
// the bytes still unread (FIONREAD) are the bytes the program consumed — and reports kAck for
// each handoff they cover. stdout is not a protocol: it is copied to the runtime log as raw
// bytes, whatever they are.
#include "daemon/exec_driver.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "daemon/child_driver.h"

namespace shoal::daemon {
namespace {

// How often the pipe is looked at while some handoff is unread.
constexpr std::chrono::milliseconds kReadPoll{1};
// How long closing stdin waits for the program to read what it was given (a stop or sleep).
constexpr std::chrono::milliseconds kDrainBeforeClose{1000};

class ExecDriver final : public ChildDriver {
 public:
  explicit ExecDriver(LaunchSpec spec) : ChildDriver(std::move(spec)) {}
  ~ExecDriver() override {
    stopChild();
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (watcher_.joinable()) watcher_.join();
  }

  Status start(const SeatProfile& profile) {
    SHOAL_RETURN_IF_ERROR(spawn(profile, profile.command));
    watcher_ = std::thread([this] { watch(); });
    return Status::ok();
  }

  bool surfacedOnWrite() const override { return false; }
  bool surfacedOnRead() const override { return true; }

  runtime::StdinWrite handoff(const Handoff& handoff) override {
    {
      std::lock_guard lock(mu_);
      writing_ = true;  // the exit's last look waits for this write's outcome
    }
    runtime::StdinWrite wrote = ChildDriver::handoff(handoff);
    {
      std::lock_guard lock(mu_);
      writing_ = false;
      const uint64_t start = written_;
      written_ += wrote.bytesWritten;
      // A partial write is followed too: what the program read of it before it ended decides.
      if (wrote.bytesWritten > 0) unread_.push_back(Unread{handoff.handoffId, start, written_});
    }
    cv_.notify_all();
    return wrote;
  }

  void closeInput() override {
    // Give the program a moment to read what it holds, so a stop does not fail what it was
    // about to read anyway; what it has not read by then cannot be proven read.
    const auto until = std::chrono::steady_clock::now() + kDrainBeforeClose;
    std::unique_lock lock(mu_);
    while (!unread_.empty() && std::chrono::steady_clock::now() < until) {
      sweep();
      if (unread_.empty()) break;
      lock.unlock();
      std::this_thread::sleep_for(kReadPoll);
      lock.lock();
    }
    sweep(true);
    stdinClosed_ = true;
    ChildDriver::closeInput();
  }

  void kill(std::chrono::milliseconds grace) override {
    std::lock_guard lock(mu_);
    sweep(true);
    stdinClosed_ = true;
    ChildDriver::kill(grace);  // closes stdin under the lock the watcher reads it under
  }

 private:
  struct Unread {
    std::string handoffId;
    uint64_t start = 0;  // written_ before its first byte
    uint64_t end = 0;    // written_ once its last byte went out
  };

  std::string frame(const Handoff& handoff) const override { return handoff.text + "\n"; }

  std::string readOutput(runtime::UniqueFd out) override {
    char buf[8192];
    while (out.valid()) {
      ssize_t n = ::read(out.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::string("reading the runtime's stdout: ") + std::strerror(errno);
      if (n == 0) break;
      appendToLog(std::string_view(buf, static_cast<size_t>(n)));
    }
    return "";
  }

  // The program is gone: what it read before it went is known exactly; the rest was never read.
  void beforeExitEvent() override {
    std::unique_lock lock(mu_);
    // A write to the dead program ends at once (EPIPE): wait for it, so the bytes it put in
    // the pipe are accounted before the generation's end is reported.
    cv_.wait(lock, [&] { return !writing_; });
    sweep(true);
  }

  // Reports every handoff whose last byte the program consumed (mu_ held). `final`: the
  // program reads no more (it exited, or stdin closes now), so a handoff it read part of is
  // reported with the bytes it read — the seat surfaces the messages those bytes hold whole.
  void sweep(bool final = false) {
    if (unread_.empty() || stdinClosed_) return;
    const std::optional<size_t> inPipe = child_->stdinUnread();
    if (!inPipe) return;
    const uint64_t consumed = written_ - std::min<uint64_t>(*inPipe, written_);
    while (!unread_.empty() && unread_.front().end <= consumed) {
      DriverEvent e;
      e.kind = DriverEvent::Kind::kAck;
      e.handoffId = std::move(unread_.front().handoffId);
      e.detail = "stdin-read";
      unread_.pop_front();
      emit(std::move(e));
    }
    if (final && !unread_.empty() && unread_.front().start < consumed) {
      DriverEvent e;
      e.kind = DriverEvent::Kind::kAck;
      e.handoffId = unread_.front().handoffId;
      e.bytesRead = static_cast<size_t>(consumed - unread_.front().start);
      e.detail = "stdin-read";
      unread_.pop_front();
      emit(std::move(e));
    }
  }

  void watch() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      if (unread_.empty() || stdinClosed_) {
        cv_.wait(lock, [&] { return stopping_ || (!unread_.empty() && !stdinClosed_); });
        continue;
      }
      sweep();
      cv_.wait_for(lock, kReadPoll, [&] { return stopping_; });
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t written_ = 0;       // every byte ever written to stdin (guarded by mu_)
  std::deque<Unread> unread_;  // handoffs written whole, oldest first (guarded by mu_)
  bool stdinClosed_ = false;   // guarded by mu_
  bool writing_ = false;       // a handoff write is in progress (guarded by mu_)
  bool stopping_ = false;      // guarded by mu_
  std::thread watcher_;
};

}  // namespace

Result<std::unique_ptr<RuntimeDriver>> launchExecDriver(const SeatProfile& profile,
                                                        LaunchSpec spec) {
  auto driver = std::make_unique<ExecDriver>(std::move(spec));
  SHOAL_RETURN_IF_ERROR(driver->start(profile));
  return std::unique_ptr<RuntimeDriver>(std::move(driver));
}

}  // namespace shoal::daemon
