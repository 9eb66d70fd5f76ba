#include "base/ids.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>

#include <sys/random.h>

namespace shoal {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr char kBase32Lower[] = "abcdefghijklmnopqrstuvwxyz234567";

// Last (ms, counter) handed out, so ids from one process never go backwards.
struct UuidState {
  std::mutex mu;
  int64_t lastMs = 0;
  uint16_t counter = 0;  // 12 bits used
};

UuidState& uuidState() {
  static UuidState state;
  return state;
}

}  // namespace

Status fillRandom(std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::getrandom(out.data() + done, out.size() - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unavailable("no-entropy", std::string("getrandom failed: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

Result<std::string> newUuidV7(const Clock& clock) {
  std::array<uint8_t, 16> b{};
  SHOAL_RETURN_IF_ERROR(fillRandom(b));

  int64_t ms = clock.wallMs();
  uint16_t counter = 0;
  {
    UuidState& st = uuidState();
    std::lock_guard lock(st.mu);
    if (ms <= st.lastMs) {
      ms = st.lastMs;
      counter = static_cast<uint16_t>(st.counter + 1);
      if (counter > 0x0fff) {  // counter exhausted within this ms: borrow the next ms
        ms += 1;
        counter = static_cast<uint16_t>(b[6] & 0x03);  // small random start keeps room to grow
      }
    } else {
      counter = static_cast<uint16_t>(((b[6] << 8) | b[7]) & 0x03ff);  // leave headroom
    }
    st.lastMs = ms;
    st.counter = counter;
  }

  auto ums = static_cast<uint64_t>(ms);
  for (int i = 0; i < 6; ++i)
    b[static_cast<size_t>(i)] = static_cast<uint8_t>(ums >> (40 - 8 * i));
  b[6] = static_cast<uint8_t>(0x70 | ((counter >> 8) & 0x0f));
  b[7] = static_cast<uint8_t>(counter & 0xff);
  b[8] = static_cast<uint8_t>(0x80 | (b[8] & 0x3f));

  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0x0f];
  }
  return out;
}

Result<std::string> newLifecycleUid() {
  // 26 base32 characters × 5 bits = 130 bits; draw 17 bytes (136 bits) and use 130 of them.
  std::array<uint8_t, 17> b{};
  SHOAL_RETURN_IF_ERROR(fillRandom(b));
  std::string out;
  out.reserve(26);
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t byte : b) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.size() < 26) {
      out += kBase32Lower[(acc >> (bits - 5)) & 0x1f];
      bits -= 5;
    }
  }
  return out;
}

Result<std::string> newHexToken(size_t bytes) {
  std::string raw(bytes, '\0');
  SHOAL_RETURN_IF_ERROR(
      fillRandom(std::span<uint8_t>(reinterpret_cast<uint8_t*>(raw.data()), raw.size())));
  std::string out;
  out.reserve(bytes * 2);
  for (char c : raw) {
    auto u = static_cast<uint8_t>(c);
    out += kHex[u >> 4];
    out += kHex[u & 0x0f];
  }
  return out;
}

bool isUuidV7(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  if (s[14] != '7') return false;
  char variant = s[19];
  return variant == '8' || variant == '9' || variant == 'a' || variant == 'b';
}

bool isLifecycleUid(std::string_view s) {
  if (s.size() < 26 || s.size() > 32) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

int64_t uuidV7TimestampMs(std::string_view s) {
  if (!isUuidV7(s)) return -1;
  int64_t ms = 0;
  for (size_t i = 0; i < 13; ++i) {
    if (i == 8) continue;
    char c = s[i];
    int v = c <= '9' ? c - '0' : c - 'a' + 10;
    ms = (ms << 4) | v;
  }
  return ms;
}

}  // namespace shoal
