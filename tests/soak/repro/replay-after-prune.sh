#!/usr/bin/env bash
# Reproduction (found by tests/soak/run.sh, `SOAK_POST_EVERY=1`): a restarted seat's channel
# join replays the channel's history (replay is on by default); posts the seat surfaced long
# ago whose journal tombstones were pruned (the journal keeps 512) are admitted again, as
# historical, pull-only (`wake: channel-pull`), and stay `queued` in the journal: an exec seat
# never hands them over, they take room in the seat's 200-message local inbox, and a seat with
# `shoal_inbox` is offered posts it already surfaced.
# Expected: after the restart, queued 0. Got: queued 3, each old post `queued`, `channel-pull`,
# flags `h-`, though each was read once before the restart.
set -u
W=$(mktemp -d "${TMPDIR:-/tmp}/shoal-repro.XXXXXX")
export HOME=$W/home XDG_DATA_HOME=$W/home/.local/share XDG_STATE_HOME=$W/home/.local/state XDG_RUNTIME_DIR=$W/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
SHOAL=${SHOAL:-$(cd "$(dirname "$0")/../../.." && pwd)/build/apps/shoal}
S() { "$SHOAL" --space rp "$@"; }
S up --port 29413 --json >/dev/null || exit 1
cat >"$W/rec.sh" <<'EOS'
#!/usr/bin/env bash
while IFS= read -r line; do
  case $line in "["*", id "*) r=${line#*, id }; echo "${r%%[,:]*}" >>"$1";; esac
done
EOS
chmod +x "$W/rec.sh"
S seat add rec --channel c -- "$W/rec.sh" "$W/read.ids" >/dev/null || exit 1
sleep 2
for i in 1 2 3; do S send msg c "old post $i" --json | jq -r .id; done >"$W/posts.ids"
for i in $(seq 1 520); do S send dm local.rec "dm $i" --json >/dev/null; done  # prunes the posts' tombstones
sleep 3
echo "before the restart: read $(wc -l <"$W/read.ids") messages; daemon: $(S daemon status --json | jq -c '.seats[0] | {queued, surfaced}')"
kill -KILL "$(S status --json | jq -r .local.daemonPid)"   # the daemon crashes; the supervisor restarts it
sleep 8
J=$XDG_DATA_HOME/shoal/rp/seats/local.rec/.shoal/.daemon-state.json
while read -r id; do
  printf '%s read %s time(s); journal: ' "$id" "$(grep -c "$id" "$W/read.ids")"
  jq -c --arg id "$id" '[.live[], .tombstones[]] | map(select(.id == $id)) | .[0]
    | {state, wake, flags: ((.body // "") | split("\n")[2])}' "$J"
done <"$W/posts.ids"
echo "after the restart: daemon: $(S daemon status --json | jq -c '.seats[0] | {queued, surfaced}')"
S down >/dev/null
[[ ${KEEP:-0} == 1 ]] && echo "kept $W" || rm -rf "$W"
