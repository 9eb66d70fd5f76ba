#!/usr/bin/env bash
# recorder.sh LOG [WORK_MS]: the soak's exec runtime (tests/soak/README.md). It reads the
# delivery blocks its seat writes to its stdin (their format: the header comment of
# src/daemon/presentation.h) and appends each message id it read to LOG, one line a message:
#
#   <message id> <recorder pid> <epoch seconds.micros>
#
# An item's head starts at the left margin with `[` and carries `, id <message id>` (body lines
# are indented, so peer text can never look like a head). The line is written with one
# write(2) as soon as the head line was read, before anything else is read.
#
# With $SHOAL_ACK_FD set (a seat added with `--ack`), it acknowledges each message it handled:
# `ack <id>` on that fd, written AFTER the id is in LOG and once the whole item was read (the
# next line that is not one of its indented body lines). So on such a seat a message the seat
# reports surfaced is always in LOG.
#
# WORK_MS (default 0): after logging a message it "works" on it for a random 0..WORK_MS ms
# before reading on (and, on an ack seat, before acknowledging it), so that kills land while
# messages are written to it but not read yet, or read but not acknowledged.
#
# bash's `read` takes a pipe one byte at a time, so what the daemon sees unread in the pipe
# (FIONREAD, the exec driver's `stdin-read` evidence) is exactly what this script consumed.
set -u
log=${1:?usage: recorder.sh LOG [WORK_MS]}
work_ms=${2:-0}
exec 9>>"$log" || exit 1
ack_fd=${SHOAL_ACK_FD:-}
pending=""  # an id logged whose item may still have body lines to read

ack_pending() {
  if [[ -n $pending && -n $ack_fd ]]; then
    printf 'ack %s\n' "$pending" >&"$ack_fd"
  fi
  pending=""
}

while IFS= read -r line; do
  if [[ $line != "  "* ]]; then ack_pending; fi
  if [[ $line == "["*", id "* ]]; then
    rest=${line#*, id }
    id=${rest%%[,:]*}
    id=${id%% *}
    if [[ -n $id ]]; then
      printf '%s %s %s\n' "$id" "$$" "${EPOCHREALTIME:-0}" >&9
      pending=$id
      if ((work_ms > 0)); then
        printf -v pause '0.%03d' $((RANDOM % (work_ms + 1)))
        sleep "$pause"
      fi
    fi
  fi
done
ack_pending
