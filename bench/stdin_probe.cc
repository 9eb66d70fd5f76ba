// stdin_probe: the runtime seat_bench runs in its exec seat. It reads stdin and, each time a
// whole delivery block has arrived, writes one byte to the FIFO named on its command line, so
// the bench can time "send → bytes at the runtime's stdin" without reading the runtime log.
//
//   stdin_probe FIFO
//
// The end of a block (src/daemon/presentation.h, runtime/exec/driver.cc): the line
// `=== end of shoal delivery: what to do now ===` starts the tail, the tail's lines follow
// (none of them empty), and the exec driver writes ONE extra line feed after the block — so
// the first empty line after the tail opening completes the block. A line starting with `===`
// at the left margin is always the daemon's (peer text is indented or follows a `[tag]`).
//
// It exits on EOF (the seat closed stdin) or when the FIFO has no reader (SIGPIPE). stdout is
// not used: the exec driver copies it to the runtime log.
//
// Thread safety: single-threaded. Lifetime: one process per seat generation.
#include <cerrno>
#include <cstdio>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

namespace {

constexpr std::string_view kTailOpening = "=== end of shoal delivery";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stdin_probe FIFO\n");
    return 2;
  }
  // Blocks until the bench has the FIFO open for reading (it always has, before the seat).
  int out = ::open(argv[1], O_WRONLY | O_CLOEXEC);
  if (out < 0) {
    std::perror("stdin_probe: opening the FIFO");
    return 1;
  }
  std::string line;  // the current line's first bytes (enough to recognise the tail opening)
  bool inTail = false;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c != '\n') {
        if (line.size() < kTailOpening.size()) line.push_back(c);
        continue;
      }
      if (line.rfind(kTailOpening, 0) == 0) {
        inTail = true;
      } else if (inTail && line.empty()) {
        inTail = false;
        ssize_t w;
        do {
          w = ::write(out, "b", 1);
        } while (w < 0 && errno == EINTR);
        if (w != 1) return 1;
      }
      line.clear();
    }
  }
  ::close(out);
  return 0;
}
