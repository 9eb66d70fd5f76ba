// The `exec` driver: any program that reads its prompts on stdin. Each handoff is the delivery
// block followed by one newline; a complete write is the surfaced boundary (seed 004 §2.1
// raw-stdin rules — the seat owns the journal side). stdout is not a protocol: it is copied to
// the runtime log as raw bytes, whatever they are.
#include "daemon/exec_driver.h"

#include <cstring>

#include <unistd.h>

#include "daemon/child_driver.h"

namespace shoal::daemon {
namespace {

class ExecDriver final : public ChildDriver {
 public:
  explicit ExecDriver(LaunchSpec spec) : ChildDriver(std::move(spec)) {}
  using ChildDriver::spawn;
  bool surfacedOnWrite() const override { return true; }

 private:
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
};

}  // namespace

Result<std::unique_ptr<RuntimeDriver>> launchExecDriver(const SeatProfile& profile,
                                                        LaunchSpec spec) {
  auto driver = std::make_unique<ExecDriver>(std::move(spec));
  SHOAL_RETURN_IF_ERROR(driver->spawn(profile, profile.command));
  return std::unique_ptr<RuntimeDriver>(std::move(driver));
}

}  // namespace shoal::daemon
