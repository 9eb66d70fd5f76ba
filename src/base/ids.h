// Identifiers minted by Shoal: message ids (UUIDv7) and lifecycle uids.
//
// - UUIDv7 (RFC 9562): 48-bit Unix ms timestamp, version 7, variant 10, 74 random bits.
//   Canonical lower-case 8-4-4-4-12 form. Used as CotalMessage.id and the JetStream
//   Nats-Msg-Id. Ids minted in one process are strictly increasing (a counter in rand_a keeps
//   order within one millisecond).
// - Lifecycle uid / instance id (Cotal §13.1): one token matching [a-z0-9]{26,32} carrying
//   ≥128 bits from the OS CSPRNG. Shoal mints 26 base32-lower characters (a-z, 2-7) = 130
//   bits.
//
// Randomness comes from getrandom(2). If the OS cannot supply it the call fails closed with
// kUnavailable: no id is ever made from weak randomness.
//
// Thread safety: all functions may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"

namespace shoal {

// Fills `out` from the OS CSPRNG.
Status fillRandom(std::span<uint8_t> out);

Result<std::string> newUuidV7(const Clock& clock);
Result<std::string> newLifecycleUid();

// A random lower-case hex token of `bytes` bytes (e.g. an inbox nonce, a bearer token).
Result<std::string> newHexToken(size_t bytes);

bool isUuidV7(std::string_view s);
bool isLifecycleUid(std::string_view s);  // [a-z0-9]{26,32}

// The millisecond timestamp of a UUIDv7, or -1 if `s` is not one.
int64_t uuidV7TimestampMs(std::string_view s);

}  // namespace shoal
