// The `exec` driver: any program that reads its prompts on stdin. Each handoff is the delivery
// block followed by one newline. A complete write is only transport acceptance (the bytes may
// wait in the pipe, and die with the program): the surfaced boundary is the program reading
// the handoff's last byte. The driver knows it from the pipe itself — the bytes it wrote minus
// the bytes still unread (FIONREAD) are the bytes the program consumed — and reports kAck for
// each handoff they cover. stdout is not a protocol: it is copied to the runtime log as raw
// bytes, whatever they are.
//
// A seat added with `--ack` asks more than a read: its program gets the write end of a pipe as
// fd 3 ($SHOAL_ACK_FD=3) and acknowledges each message it handled with a line `ack <shown id>`
// (ack_lines.h); each acknowledgement of a message of a handoff still awaiting one is a kAck
// with `ackedId`, and nothing else surfaces (reading is not acknowledging). Acknowledgements
// written before the program ended are read before its end is reported.
#include "runtime/exec/driver.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include "runtime/child_driver.h"
#include "runtime/deadline.h"
#include "runtime/exec/ack_lines.h"

namespace shoal::runtime {
namespace {

// How often the pipe is looked at while some handoff is unread.
constexpr std::chrono::milliseconds kReadPoll{1};
// How long closing stdin waits for the program to read what it was given (a stop or sleep).
constexpr std::chrono::milliseconds kDrainBeforeClose{1000};

class ExecDriver final : public ChildDriver {
 public:
  ExecDriver(LaunchSpec spec, bool acks)
      : ChildDriver(std::move(spec), execTraits(acks)), acks_(acks) {}
  ~ExecDriver() override {
    stopChild();
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (wakeup_) wakeup_->signal();
    if (watcher_.joinable()) watcher_.join();
  }

  Status start() {
    UniqueFd ackWrite;
    if (acks_) {
      SHOAL_ASSIGN_OR_RETURN(Pipe pipe, Pipe::create());
      SHOAL_ASSIGN_OR_RETURN(StopWakeup wakeup, StopWakeup::create());
      wakeup_.emplace(std::move(wakeup));
      ackRead_ = std::move(pipe.read);
      ackWrite = std::move(pipe.write);
      fd3_ = ackWrite.get();
      extraEnv_.emplace_back("SHOAL_ACK_FD", "3");
    }
    SHOAL_RETURN_IF_ERROR(spawn(spec_.command));
    // ackWrite closes here: the program (and what it starts) hold the only write ends, so the
    // pipe reads EOF once they are all gone.
    watcher_ = std::thread([this] { acks_ ? watchAcks() : watch(); });
    return Status::ok();
  }

  StdinWrite handoff(const Handoff& handoff) override {
    {
      std::lock_guard lock(mu_);
      writing_ = true;  // the exit's last look waits for this write's outcome
      // Awaited before the first byte goes out: the program may answer before write() returns.
      if (acks_) {
        for (const auto& item : handoff.items)
          awaiting_.push_back(Awaited{handoff.handoffId, item.ownerId, item.shownId});
      }
    }
    StdinWrite wrote = ChildDriver::handoff(handoff);
    {
      std::lock_guard lock(mu_);
      writing_ = false;
      const uint64_t start = written_;
      written_ += wrote.bytesWritten;
      // A partial write is followed too: what the program read of it before it ended decides.
      if (wrote.bytesWritten > 0 && !acks_)
        unread_.push_back(Unread{handoff.handoffId, start, written_});
      if (wrote.bytesWritten == 0) {
        std::erase_if(awaiting_,
                      [&](const Awaited& a) { return a.handoffId == handoff.handoffId; });
      }
    }
    cv_.notify_all();
    return wrote;
  }

  void closeInput() override {
    // Give the program a moment to read (or acknowledge) what it holds, so a stop does not fail
    // what it was about to take anyway; what it has not by then cannot be proven surfaced.
    const auto until = std::chrono::steady_clock::now() + kDrainBeforeClose;
    std::unique_lock lock(mu_);
    while ((!unread_.empty() || !awaiting_.empty()) && std::chrono::steady_clock::now() < until) {
      sweep();
      if (unread_.empty() && awaiting_.empty()) break;
      cv_.wait_for(lock, kReadPoll);
    }
    sweep(true);
    stdinClosed_ = true;
    ChildDriver::closeInput();
  }

  void kill(std::chrono::milliseconds grace) override {
    std::lock_guard lock(mu_);
    if (acks_) readAcks(/*final=*/false);  // what it acknowledged before the kill counts
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
  struct Awaited {
    std::string handoffId;
    std::string ownerId;
    std::string shownId;
  };

  std::string frame(const Handoff& handoff) const override { return handoff.text + "\n"; }

  std::string readOutput(UniqueFd out) override {
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

  // The program is gone: what it read (or acknowledged) before it went is known exactly; the
  // rest was not.
  void beforeExitEvent() override {
    std::unique_lock lock(mu_);
    // A write to the dead program ends at once (EPIPE): wait for it, so the bytes it put in
    // the pipe are accounted before the generation's end is reported.
    cv_.wait(lock, [&] { return !writing_; });
    if (acks_) {
      readAcks(/*final=*/true);
    } else {
      sweep(true);
    }
  }

  // Reads what the ack pipe holds now (mu_ held) and reports each acknowledgement of a message
  // still awaiting one. `final`: the program is gone; a last line without its line feed counts.
  void readAcks(bool final) {
    char buf[4096];
    AckLines::Parsed parsed;
    while (!ackEof_) {
      const ssize_t n = ::read(ackRead_.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // EOF: every write end is closed. EAGAIN: nothing more for now.
        ackEof_ = n == 0 || errno != EAGAIN;
        break;
      }
      merge(parsed, lines_.feed(std::string_view(buf, static_cast<size_t>(n))));
    }
    if (final || ackEof_) merge(parsed, lines_.finish());
    for (const auto& id : parsed.ids) {
      auto it = std::find_if(awaiting_.begin(), awaiting_.end(),
                             [&](const Awaited& a) { return a.shownId == id; });
      if (it == awaiting_.end()) {
        ++parsed.ignored;  // a message not handed over, or acknowledged already
        continue;
      }
      DriverEvent e;
      e.kind = DriverEvent::Kind::kAck;
      e.handoffId = it->handoffId;
      e.ackedId = it->ownerId;
      e.detail = "runtime-ack";
      awaiting_.erase(it);
      emit(std::move(e));
    }
    if (parsed.ignored > 0) {
      appendToLog(
          fmt::format("[shoal] {} line(s) on $SHOAL_ACK_FD acknowledged nothing (not "
                      "`ack <id>` for a message awaiting one)\n",
                      parsed.ignored));
    }
    cv_.notify_all();
  }

  static void merge(AckLines::Parsed& into, AckLines::Parsed more) {
    into.ids.insert(into.ids.end(), std::make_move_iterator(more.ids.begin()),
                    std::make_move_iterator(more.ids.end()));
    into.ignored += more.ignored;
  }

  // The ack pipe's reader: waits for bytes (or the destructor's wakeup) and reads them.
  void watchAcks() {
    if (::fcntl(ackRead_.get(), F_SETFL, ::fcntl(ackRead_.get(), F_GETFL) | O_NONBLOCK) != 0)
      appendToLog("[shoal] cannot make the ack pipe non-blocking; acknowledgements are lost\n");
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (stopping_ || ackEof_) return;
      }
      auto ready = waitForFd(ackRead_.get(), POLLIN, wakeup_->fd(), Deadline::never());
      std::lock_guard lock(mu_);
      if (stopping_ || !ready.isOk() || *ready == FdWait::kWoken) return;
      readAcks(/*final=*/false);
    }
  }

  // Reports every handoff whose last byte the program consumed (mu_ held). `final`: the
  // program reads no more (it exited, or stdin closes now), so a handoff it read part of is
  // reported with the bytes it read — the seat surfaces the messages those bytes hold whole.
  void sweep(bool final = false) {
    if (acks_) return;  // only acknowledgements surface
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

  const bool acks_;  // the seat's `--ack`: surfaced on `ack <id>` only
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t written_ = 0;       // every byte ever written to stdin (guarded by mu_)
  std::deque<Unread> unread_;  // handoffs written whole, oldest first (guarded by mu_)
  bool stdinClosed_ = false;   // guarded by mu_
  bool writing_ = false;       // a handoff write is in progress (guarded by mu_)
  bool stopping_ = false;      // guarded by mu_
  // The ack protocol: the pipe's read end, what it has framed, the messages awaiting an
  // acknowledgement (oldest first), and the destructor's wakeup of the reader.
  UniqueFd ackRead_;              // set before the watcher starts; read under mu_
  bool ackEof_ = false;           // guarded by mu_
  AckLines lines_;                // guarded by mu_
  std::deque<Awaited> awaiting_;  // guarded by mu_
  std::optional<StopWakeup> wakeup_;
  std::thread watcher_;
};

}  // namespace

Result<std::unique_ptr<RuntimeDriver>> launchExecDriver(LaunchSpec spec) {
  const bool acks = spec.acks;
  auto driver = std::make_unique<ExecDriver>(std::move(spec), acks);
  SHOAL_RETURN_IF_ERROR(driver->start());
  return std::unique_ptr<RuntimeDriver>(std::move(driver));
}

}  // namespace shoal::runtime
