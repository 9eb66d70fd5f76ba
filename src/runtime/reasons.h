// Runtime reason tokens: the stable `Status::reason()` of every outcome runtime/ reports.
// Part of the `--json` contract; tests pin them.
//
// Transport-fatal (seed 004 §1.2): kLineTooLong, kMalformedFrame, kUnexpectedEof, kReadFailed
// on a runtime's output, and kStdinClosed / kStdinWriteFailed / kStdinWriteTimeout (a short or
// ambiguous write) on its input. The owner must retire the Process generation: the stream's
// request/turn ownership is no longer provable. Nothing is ever truncated or skipped.
//
// Thread safety: constants only.
// Lifetime: static storage.
#pragma once

#include <string_view>

namespace shoal::reason {

// --- Line framing (LineReader) and output entries (TranslatedOutputQueue) ------------------
// kResourceExhausted: a complete line, newline included, is longer than the line cap.
inline constexpr std::string_view kLineTooLong = "line-too-long";
// kInvalidArgument: a complete line failed the frame validator (e.g. not a JSON object).
inline constexpr std::string_view kMalformedFrame = "malformed-frame";
// kUnavailable: the stream ended with a partial line pending (the writer died mid-line).
inline constexpr std::string_view kUnexpectedEof = "unexpected-eof";
// kUnavailable (kInternal for EBADF/EFAULT/EINVAL): read(2) failed; the message names errno.
inline constexpr std::string_view kReadFailed = "read-failed";
// kCancelled: the reader's stop token was triggered while it waited for bytes.
inline constexpr std::string_view kReadCancelled = "read-cancelled";

// --- Translated-output queue --------------------------------------------------------------
// kCancelled: the producer's (or waiter's) stop token was triggered while it waited.
inline constexpr std::string_view kCancelled = "cancelled";
// kCancelled: the queue was aborted (generation retired); nothing more is admitted or popped.
inline constexpr std::string_view kAborted = "aborted";
// kFailedPrecondition: the queue is sealed (source EOF, malformed frame, refused entry).
inline constexpr std::string_view kQueueSealed = "output-queue-sealed";
// kDeadlineExceeded: the queue stayed full for the whole push timeout (nothing admitted).
inline constexpr std::string_view kQueueFull = "output-queue-full";
// kDeadlineExceeded: pop() / awaitDrained() timed out (nothing consumed / not drained yet).
inline constexpr std::string_view kTimedOut = "timed-out";
// kInternal: an entry was not exactly one newline-terminated line (an encoder bug).
inline constexpr std::string_view kNotOneLine = "frame-not-one-line";

// --- Child processes (ChildProcess) -------------------------------------------------------
// kNotFound: argv[0] does not exist (or is not on PATH).
inline constexpr std::string_view kBinaryMissing = "binary-missing";
// kPermissionDenied / kInvalidArgument: argv[0] exists but cannot be executed.
inline constexpr std::string_view kBinaryNotExecutable = "binary-not-executable";
// kNotFound: the requested working directory does not exist or is not a directory.
inline constexpr std::string_view kCwdMissing = "cwd-missing";
// kUnavailable: posix_spawn failed for another reason (resources); the message names errno.
inline constexpr std::string_view kSpawnFailed = "spawn-failed";
// kFailedPrecondition: the child closed its stdin (EPIPE): it exited or stopped reading.
inline constexpr std::string_view kStdinClosed = "stdin-closed";
// kFailedPrecondition: closeStdin() was called earlier (or stdin was never opened).
inline constexpr std::string_view kStdinNotOpen = "stdin-not-open";
// kUnavailable: write(2) to stdin failed with another errno; the message names it.
inline constexpr std::string_view kStdinWriteFailed = "stdin-write-failed";
// kDeadlineExceeded: the child did not take the bytes in time; bytesWritten says how many.
inline constexpr std::string_view kStdinWriteTimeout = "stdin-write-timeout";
// kCancelled: the writer's stop token was triggered; bytesWritten says how many went out.
inline constexpr std::string_view kStdinWriteCancelled = "stdin-write-cancelled";
// kFailedPrecondition: the child was already reaped; its pid may belong to someone else.
inline constexpr std::string_view kNotRunning = "not-running";
// kNotFound: no process is left in the child's process group.
inline constexpr std::string_view kNoProcessGroup = "no-such-process-group";
// kDeadlineExceeded: the child did not exit within the wait timeout (it is left running).
inline constexpr std::string_view kStillRunning = "still-running";
// kInternal: a system call the supervision depends on failed; the message names it.
inline constexpr std::string_view kSystemCallFailed = "system-call-failed";

}  // namespace shoal::reason
