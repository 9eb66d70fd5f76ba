// AckLines: the exec acknowledgement protocol's framing (docs/daemon.md, "Acknowledging exec
// programs"). A seat added with `--ack` gives its program a pipe as fd 3 ($SHOAL_ACK_FD); the
// program writes one line per message it handled:
//
//   ack <id>⏎        <id>: the message id exactly as the block's head shows it after ", id "
//
// Anything else is not an acknowledgement: a line that is not `ack ` + a non-empty id without
// spaces, or longer than kMaxAckLineBytes, is counted as ignored and never surfaces anything.
// Bytes arrive in arbitrary pieces (feed()); an over-long line is dropped up to its line feed,
// so a runaway writer costs at most kMaxAckLineBytes of memory.
//
// Thread safety: none (one reader). Lifetime: owns its buffer.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::runtime {

// A shown id is at most ~130 bytes (presentation.h); the rest is slack for a quoted one.
inline constexpr size_t kMaxAckLineBytes = 1024;

// The id an `ack <id>` line names (a trailing '\r' is tolerated); nullopt if it is not one.
std::optional<std::string> parseAckLine(std::string_view line);

class AckLines {
 public:
  struct Parsed {
    std::vector<std::string> ids;  // acknowledged ids, in order
    size_t ignored = 0;            // lines that were not acknowledgements
  };

  // Takes the next bytes; returns what the lines they completed say.
  Parsed feed(std::string_view bytes);
  // The stream ended: a last line without its line feed still counts.
  Parsed finish();

 private:
  void line(Parsed& out);

  std::string pending_;
  bool overlong_ = false;  // dropping the rest of a line longer than the cap
};

}  // namespace shoal::runtime
