#!/usr/bin/env bash
# Reproduction (found by tests/soak/run.sh): a channel post stored while an exec seat's daemon
# is down, whose durable copy has not reached the seat when the restarted seat rejoins the
# channel, is admitted from the join's history replay (replay is on by default) as *historical*,
# so pull-only (`wake: channel-pull`): an exec runtime never gets it and it stays `queued` in the
# seat's journal, with no receipt. The durable copy that follows is deduplicated against it. The
# soak hit this without any help (a daemon kill 0.2 s before a post); here the delivery plane
# is held with SIGSTOP across the restart so that the replay always wins the race.
# Expected: every post read once. Before the fix: the post made while the daemon was down was
# read 0 times and its journal record stayed `queued`, `channel-pull`, flags `h-` (historical).
# Fixed: the durable copy replaces the historical record (src/daemon/seat/admission.cc,
# replacedHistorical; test
# ClaudeSeatTest.APostMissedWhileDownIsNotHistoricalWhenItsCopyComesAfterTheReplay).
set -u
W=$(mktemp -d "${TMPDIR:-/tmp}/shoal-repro.XXXXXX")
export HOME=$W/home XDG_DATA_HOME=$W/home/.local/share XDG_STATE_HOME=$W/home/.local/state XDG_RUNTIME_DIR=$W/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
SHOAL=${SHOAL:-$(cd "$(dirname "$0")/../../.." && pwd)/build/apps/shoal}
S() { "$SHOAL" --space rp "$@"; }
S up --no-planes --port 29412 --json >/dev/null || exit 1
"$SHOAL" --space rp serve --planes manager >"$W/manager.log" 2>&1 & M=$!
"$SHOAL" --space rp serve --planes delivery >"$W/delivery.log" 2>&1 & DP=$!
sleep 2
"$SHOAL" --space rp daemon run >"$W/daemon1.log" 2>&1 & D=$!
sleep 2
cat >"$W/rec.sh" <<'EOS'
#!/usr/bin/env bash
while IFS= read -r line; do
  case $line in "["*", id "*) r=${line#*, id }; echo "${r%%[,:]*}" >>"$1";; esac
done
EOS
chmod +x "$W/rec.sh"
S seat add rec --channel c -- "$W/rec.sh" "$W/read.ids" >/dev/null || exit 1
sleep 2
before=$(S send msg c "posted while the daemon runs" --json | jq -r .id)
sleep 2
kill -STOP $DP                               # the delivery plane is slow for a moment
kill -KILL $D; wait $D 2>/dev/null           # the daemon crashes
during=$(S send msg c "posted while the daemon is down" --json | jq -r .id)
"$SHOAL" --space rp daemon run >"$W/daemon2.log" 2>&1 & D=$!   # the user starts it again
sleep 8
kill -CONT $DP                               # the plane catches up: the durable copy arrives
sleep 8
after=$(S send msg c "posted after the restart" --json | jq -r .id)
sleep 3
J=$XDG_DATA_HOME/shoal/rp/seats/local.rec/.shoal/.daemon-state.json
for id in $before $during $after; do
  printf '%s read %s time(s); journal: ' "$id" "$(grep -c "$id" "$W/read.ids")"
  jq -c --arg id "$id" '[.live[], .tombstones[]] | map(select(.id == $id)) | .[0]
    | {state, outcome, wake, flags: ((.body // "") | split("\n")[2])}' "$J"
done
S daemon status --json | jq -c '.seats[] | {state, queued, inflight, surfaced}'
grep -h "warn" "$W"/daemon2.log | cut -c1-240
kill $D $DP $M; wait 2>/dev/null
S down >/dev/null
[[ ${KEEP:-0} == 1 ]] && echo "kept $W" || rm -rf "$W"
