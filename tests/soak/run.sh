#!/usr/bin/env bash
# tests/soak/run.sh [SECONDS]: the bounded soak (`make soak`, issue 18 item 6).
#
# Mixed traffic against the real `shoal` binary and its embedded nats-server, in a mesh of its
# own (a temporary HOME, XDG dirs, space `soak`, a port of its own), with random kills of the
# seat daemon, of seats' runtimes and of the broker, and seat stop/start/sleep; then it counts,
# by message id, what each runtime read against what the seats reported to the sender. What it
# does and what every count means: tests/soak/README.md.
#
# SECONDS (default 3600) is the traffic phase; settling and counting add up to a few minutes.
# Knobs (environment): SOAK_SEATS (4), SOAK_SENDERS (3), SOAK_PAUSE (0.4 s between one
# sender's DMs), SOAK_POST_EVERY (5 s), SOAK_FAULT_MIN / SOAK_FAULT_MAX (20 / 90 s between
# faults), SOAK_SETTLE (60 s), SOAK_WORK_MS (300: a recorder spends 0..300 ms on a message),
# SOAK_SEED, SOAK_KEEP=1 (keep the work directory), SHOAL (the binary, default
# build/apps/shoal).
#
# Exit 0: every count that must be 0 is 0 and every DM has an outcome or a named reason.
# Exit 1: one of them is not (the counts say which). Exit 2: it could not run (a tool missing,
# the mesh would not start).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
DURATION=${1:-3600}
SHOAL=${SHOAL:-$repo/build/apps/shoal}
NSEATS=${SOAK_SEATS:-4}
NSENDERS=${SOAK_SENDERS:-3}
PAUSE=${SOAK_PAUSE:-0.4}
POST_EVERY=${SOAK_POST_EVERY:-5}
FAULT_MIN=${SOAK_FAULT_MIN:-20}
FAULT_MAX=${SOAK_FAULT_MAX:-90}
SETTLE=${SOAK_SETTLE:-60}
WORK_MS=${SOAK_WORK_MS:-300}
SEED=${SOAK_SEED:-$((RANDOM * 32768 + RANDOM))}
SPACE=soak
CHANNEL=soak

die() { echo "✗ soak: $*" >&2; exit 2; }

[[ $DURATION =~ ^[0-9]+$ && $DURATION -ge 30 ]] || die "SECONDS must be a whole number ≥ 30 (got \`$DURATION\`)"
[[ $WORK_MS =~ ^[0-9]+$ && $WORK_MS -le 999 ]] || die "SOAK_WORK_MS must be 0–999"
((FAULT_MIN >= 1 && FAULT_MAX >= FAULT_MIN)) || die "need 1 ≤ SOAK_FAULT_MIN ≤ SOAK_FAULT_MAX"
[[ -x $SHOAL ]] || die "no shoal binary at $SHOAL: build it first (\`make build\`, or \`make soak\` which builds it)"
command -v jq >/dev/null || die "jq is needed to read shoal's --json output: \`apt-get install jq\` (Debian package jq)"
PYTHON=$(command -v python3 || true)
[[ -n $PYTHON ]] || die "python3 is needed to read the stored receipts (tests/soak/stream_dump.py): \`apt-get install python3\` (Debian package python3)"
command -v nats-server >/dev/null || die "nats-server is not installed: run scripts/bootstrap (Debian package nats-server)"
((BASH_VERSINFO[0] >= 5)) || die "bash 5 or later is needed (EPOCHREALTIME)"

# --- an isolated mesh: nothing of the user's own mesh is read or touched ----------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/shoal-soak.XXXXXX") || die "cannot make a work directory"
export HOME=$WORK/home
export XDG_DATA_HOME=$HOME/.local/share XDG_STATE_HOME=$HOME/.local/state
export XDG_CONFIG_HOME=$HOME/.config XDG_CACHE_HOME=$HOME/.cache
export XDG_RUNTIME_DIR=$WORK/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$WORK/reads" "$WORK/out" && chmod 700 "$WORK" "$XDG_RUNTIME_DIR"
unset SHOAL_MCP_CONFIG SHOAL_ACK_FD SHOAL_SEAT SHOAL_SPACE
PORT=$((20000 + SEED % 20000))
FAULTS=$WORK/faults.jsonl
EVENTS=$WORK/soak.log
: >"$FAULTS"
T0=$(date +%s)
ok_exit=2
bg_pids=()
seen_pids=()   # every broker/planes/daemon/supervisor pid we saw: the teardown checks them

shoal() { "$SHOAL" --space "$SPACE" "$@"; }
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
elapsed() { echo $(($(date +%s) - T0)); }
say() { printf '[%5ss] %s\n' "$(elapsed)" "$*" | tee -a "$EVENTS"; }

teardown() {
  local rc=$?
  trap - EXIT INT TERM
  touch "$WORK/stop"
  [[ -s $WORK/stalled ]] && kill -CONT "$(cat "$WORK/stalled")" 2>/dev/null  # a broker-stall cut short
  {
    for p in "${bg_pids[@]}"; do
      pkill -KILL -P "$p"
      kill -KILL "$p"
    done
    wait
  } 2>/dev/null
  if [[ -e $XDG_STATE_HOME/shoal/meshes/$SPACE.json ]] || [[ ${#seen_pids[@]} -gt 0 ]]; then
    shoal down --force >>"$EVENTS" 2>&1 || shoal down --force >>"$EVENTS" 2>&1
  fi
  # Anything of this mesh still alive (a runtime a killed daemon left, say): by pid, and only
  # processes whose environment is this soak's HOME.
  local pid left=()
  local all=("${seen_pids[@]}") d
  for d in /proc/[0-9]*; do all+=("${d#/proc/}"); done
  for pid in "${all[@]}"; do
    [[ $pid == "$$" ]] && continue
    { tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "HOME=$HOME"; } 2>/dev/null || continue
    local argv=()
    mapfile -d '' -t argv 2>/dev/null <"/proc/$pid/cmdline" || continue
    case "${argv[0]##*/} ${argv[1]:-}" in
      "nats-server "* | "shoal "* | *"/recorder.sh") left+=("$pid") ;;
    esac
  done
  if ((${#left[@]} > 0)); then
    echo "! soak: stopping ${#left[@]} leftover process(es) of the soak mesh: ${left[*]}" >&2
    kill -KILL "${left[@]}" 2>/dev/null
  fi
  if ((rc == 0)) && [[ ${SOAK_KEEP:-0} != 1 ]]; then
    rm -rf "$WORK"
  else
    echo "  soak files kept in $WORK (faults.jsonl, soak.log, reads/, out/, the mesh's logs in home/.local/state/shoal/logs)" >&2
  fi
  exit "$rc"
}
trap teardown EXIT
trap 'echo; say "interrupted: tearing the soak mesh down"; exit 130' INT TERM

# --- the mesh and its seats ------------------------------------------------------------------
say "soak: ${DURATION}s of traffic, seed $SEED, work dir $WORK"
say "$("$SHOAL" --version 2>/dev/null | head -1 | awk -F ' · ' '{print $1 " · " $2}')"
if ! out=$(shoal up --port "$PORT" --json 2>&1); then
  echo "$out" >&2
  die "shoal up failed (log: $XDG_STATE_HOME/shoal/logs)"
fi
say "mesh up: $(jq -r '"\(.url) (supervisor \(.supervisorPid), broker \(.brokerPid))"' <<<"$out")"

status_json() { shoal status --json --timeout 3 2>/dev/null; }
note_pids() {
  local s
  s=$(status_json) || return 0
  mapfile -t -O "${#seen_pids[@]}" seen_pids < <(jq -r '.local // {} | [.supervisorPid, .brokerPid, .servePid, .daemonPid][] | select(. != null and . > 0)' <<<"$s" 2>/dev/null)
}
note_pids

ACK_FLAG=""
if shoal seat add --help 2>/dev/null | grep -q -- '--ack'; then
  ACK_FLAG="--ack"
else
  say "! \`shoal seat add\` has no --ack: the acknowledgement protocol is not built; every seat reads plainly (ack seats skipped)"
fi

SEAT_IDS=()
SEAT_NAMES=()
declare -A SEAT_ACK=()
for ((i = 0; i < NSEATS; i++)); do
  name="soak-$(printf "\\x$(printf %x $((97 + i)))")"
  ack=""
  [[ -n $ACK_FLAG ]] && ((i % 2 == 1)) && ack=$ACK_FLAG
  : >"$WORK/reads/$name.ids"
  if ! out=$(shoal seat add "$name" --runtime exec --channel "$CHANNEL" $ack --json -- \
    "$here/recorder.sh" "$WORK/reads/$name.ids" "$WORK_MS" 2>&1); then
    echo "$out" >&2
    die "shoal seat add $name failed"
  fi
  id=$(jq -r '.profile.id' <<<"$out")
  SEAT_IDS+=("$id")
  SEAT_NAMES+=("$name")
  SEAT_ACK[$id]=${ack:+1}
  say "seat $name ($id): exec, recorder.sh (0–${WORK_MS} ms per message)${ack:+, --ack}"
done
printf '%s\n' "${SEAT_IDS[@]}" >"$WORK/seats.txt"

# Waits until the daemon answers and every seat runs (or sleeps) as it should.
seats_ok() {
  local s
  s=$(shoal daemon status --json --timeout 3 2>/dev/null) || return 1
  jq -e --argjson n "$NSEATS" '.ok == true and (.seats | length) == $n and
      all(.seats[]; (.state == "running" or .state == "busy" or .state == "sleeping") and (.openFailure == null))' \
    <<<"$s" >/dev/null 2>&1
}
mesh_ok() {
  local s
  s=$(status_json) || return 1
  jq -e '.ok == true and .local.daemonPid > 0 and
      ([.planes[]? | select(.plane == "manager") | .responder] == ["bound"])' <<<"$s" >/dev/null 2>&1 &&
    seats_ok
}
wait_ok() { # SECONDS: 0 once mesh_ok holds
  local deadline=$(($(date +%s) + $1))
  while (($(date +%s) < deadline)); do
    mesh_ok && return 0
    sleep 1
  done
  return 1
}
wait_ok 60 || die "the soak mesh did not come up with its seats (daemon log: $XDG_STATE_HOME/shoal/logs/$SPACE-daemon.log)"
say "all $NSEATS seats running"

# --- traffic ----------------------------------------------------------------------------------
# Each sender: DMs to a random seat, one `shoal send dm … --json` at a time; sender 1 also waits
# for the receipt (`--wait surfaced=20`), to compare what a waiting sender was told with the
# receipts stored in the end. One line per send: sender, n, seat, exit code, the JSON answer.
sender() {
  local k=$1 n=0 seat out rc t text waitopt=()
  ((k == 1)) && waitopt=(--wait surfaced=20)
  RANDOM=$((SEED + k))
  while [[ ! -e $WORK/stop ]]; do
    n=$((n + 1))
    seat=${SEAT_IDS[RANDOM % NSEATS]}
    t=$(now_ms)
    text="soak dm $k.$n at $t"
    ((n % 3 == 0)) && text+=$'\n''second line'
    out=$(shoal send dm "$seat" "$text" "${waitopt[@]}" --json --timeout 5 2>>"$WORK/senders.err" | tr -d '\n')
    rc=$?
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$k" "$n" "$seat" "$t" "$rc" "${out:-null}" >>"$WORK/sent.tsv"
    sleep "$PAUSE"
  done
}
poster() {
  local n=0 out rc t
  while [[ ! -e $WORK/stop ]]; do
    n=$((n + 1))
    t=$(now_ms)
    out=$(shoal send msg "$CHANNEL" "soak post $n at $t" --json --timeout 5 2>>"$WORK/senders.err" | tr -d '\n')
    rc=$?
    printf '%s\t%s\t%s\t%s\n' "$n" "$t" "$rc" "${out:-null}" >>"$WORK/posts.tsv"
    sleep "$POST_EVERY"
  done
}

# --- faults -----------------------------------------------------------------------------------
fault_log() { # KIND DETAIL RECOVERED_MS ACTION
  jq -nc --arg kind "$1" --arg detail "$2" --argjson ms "$3" --arg action "$4" --argjson t "$(now_ms)" \
    '{t: $t, kind: $kind, detail: $detail, recoveredMs: $ms, action: $action}' >>"$FAULTS"
}
seat_pick() { echo "${SEAT_IDS[RANDOM % NSEATS]}"; }
# What a user does when the mesh does not come back by itself: `shoal up` (it replaces a dead
# supervisor's record and starts what is missing), `shoal seat start` for a parked seat, and
# last `shoal down && shoal up`.
recover() { # -> echoes the action taken ("" when the mesh healed by itself)
  local action="" s
  if wait_ok 45; then echo ""; return 0; fi
  action="shoal up"
  shoal up --json >>"$EVENTS" 2>&1
  if wait_ok 30; then echo "$action"; return 0; fi
  s=$(shoal daemon status --json --timeout 3 2>/dev/null)
  for id in $(jq -r '.seats[]? | select(.state == "parked" or .state == "stopped") | .id' <<<"$s" 2>/dev/null); do
    action+="; shoal seat start $id"
    shoal seat start "$id" --timeout 10 >>"$EVENTS" 2>&1
  done
  if wait_ok 30; then echo "$action"; return 0; fi
  action+="; shoal down && shoal up"
  shoal down >>"$EVENTS" 2>&1
  shoal up --json >>"$EVENTS" 2>&1
  if wait_ok 60; then echo "$action"; return 0; fi
  echo "$action; UNRECOVERED"
  return 1
}
inject() {
  local kind=$1 s pid seat detail t action
  s=$(status_json)
  case $kind in
    daemon-kill)
      pid=$(jq -r '.local.daemonPid // 0' <<<"$s")
      ((pid > 0)) || { echo "skip"; return; }
      kill -KILL "$pid" && detail="kill -9 daemon pid $pid"
      ;;
    broker-kill)
      pid=$(jq -r '.local.brokerPid // 0' <<<"$s")
      ((pid > 0)) || { echo "skip"; return; }
      kill -KILL "$pid" && detail="kill -9 nats-server pid $pid"
      ;;
    broker-stall)
      # A broker that hangs (a stalled disk, a paused VM) rather than dies: its connections
      # stay open while nothing is answered.
      pid=$(jq -r '.local.brokerPid // 0' <<<"$s")
      ((pid > 0)) || { echo "skip"; return; }
      t=$((5 + RANDOM % 11))
      echo "$pid" >"$WORK/stalled"
      kill -STOP "$pid" && sleep "$t"
      kill -CONT "$pid"
      rm -f "$WORK/stalled"
      detail="kill -STOP nats-server pid $pid for ${t}s, then kill -CONT"
      ;;
    planes-kill)
      pid=$(jq -r '.local.servePid // 0' <<<"$s")
      ((pid > 0)) || { echo "skip"; return; }
      kill -KILL "$pid" && detail="kill -9 planes (shoal serve) pid $pid"
      ;;
    runtime-kill)
      # The seat holding the most messages (queued + inflight), so the kill lands mid-work;
      # a random running one when none holds any.
      local row
      row=$(shoal daemon status --json --timeout 3 2>/dev/null | jq -c --argjson r "$RANDOM" '
        [.seats[]? | select((.pid // 0) > 0)] | sort_by(-((.queued // 0) + (.inflight // 0)))
        | if length == 0 then empty elif ((.[0].queued // 0) + (.[0].inflight // 0)) > 0 then .[0]
          else .[$r % length] end | {id, pid, held: ((.queued // 0) + (.inflight // 0))}')
      [[ -n $row ]] || { echo "skip"; return; }
      seat=$(jq -r .id <<<"$row") pid=$(jq -r .pid <<<"$row")
      kill -KILL "$pid" && detail="kill -9 $seat runtime (recorder) pid $pid, holding $(jq -r .held <<<"$row") message(s)"
      ;;
    mesh-crash)
      # Everything at once, as a power cut would (the disk survives): supervisor, broker,
      # planes, daemon and every runtime; then the user runs `shoal up`.
      local pids=()
      mapfile -t pids < <(jq -r '.local | [.supervisorPid, .brokerPid, .servePid, .daemonPid][] | select(. > 0)' <<<"$s" 2>/dev/null
        shoal daemon status --json --timeout 3 2>/dev/null | jq -r '.seats[]? | .pid // empty | select(. > 0)')
      ((${#pids[@]} > 0)) || { echo "skip"; return; }
      kill -KILL "${pids[@]}" 2>/dev/null
      detail="kill -9 supervisor, broker, planes, daemon and runtimes (${pids[*]}); then shoal up"
      sleep 1
      shoal up --json >>"$EVENTS" 2>&1
      ;;
    seat-stop)
      seat=$(seat_pick)
      t=$((3 + RANDOM % 10))
      shoal seat stop "$seat" --timeout 10 >>"$EVENTS" 2>&1
      detail="shoal seat stop $seat; ${t}s; shoal seat start"
      sleep "$t"
      shoal seat start "$seat" --timeout 10 >>"$EVENTS" 2>&1
      ;;
    seat-sleep)
      seat=$(seat_pick)
      t=$((3 + RANDOM % 10))
      shoal seat sleep "$seat" --timeout 10 >>"$EVENTS" 2>&1
      detail="shoal seat sleep $seat; ${t}s (a DM cold-starts it); shoal seat start"
      sleep "$t"
      shoal seat start "$seat" --timeout 10 >>"$EVENTS" 2>&1
      ;;
  esac
  echo "$detail"
}
faulter() {
  local kinds=(daemon-kill daemon-kill daemon-kill runtime-kill runtime-kill runtime-kill
    broker-kill broker-kill broker-stall planes-kill seat-stop seat-sleep mesh-crash)
  local kind detail t0 action ms gap
  RANDOM=$SEED
  while :; do
    gap=$((FAULT_MIN + RANDOM % (FAULT_MAX - FAULT_MIN + 1)))
    for ((s = 0; s < gap; s++)); do
      [[ -e $WORK/stop || -e $WORK/traffic-over ]] && return 0
      sleep 1
    done
    kind=${kinds[RANDOM % ${#kinds[@]}]}
    t0=$(now_ms)
    detail=$(inject "$kind")
    [[ $detail == skip || -z $detail ]] && continue
    say "fault $kind: $detail"
    action=$(recover)
    ms=$(($(now_ms) - t0))
    note_pids_to_file
    fault_log "$kind" "$detail" "$ms" "$action"
    say "  healthy again after $((ms / 1000)).$(((ms % 1000) / 100)) s${action:+ (user action: $action)}"
  done
}
note_pids_to_file() {
  status_json | jq -r '.local // {} | [.supervisorPid, .brokerPid, .servePid, .daemonPid][] | select(. != null and . > 0)' \
    >>"$WORK/pids.txt" 2>/dev/null
}

for ((k = 1; k <= NSENDERS; k++)); do
  sender "$k" &
  bg_pids+=($!)
done
poster &
bg_pids+=($!)
faulter &
fault_pid=$!
bg_pids+=("$fault_pid")

end=$((T0 + DURATION))
next_report=$(($(date +%s) + 30))
while (($(date +%s) < end)); do
  sleep 1
  if (($(date +%s) >= next_report)); then
    next_report=$((next_report + 30))
    say "progress: $(wc -l <"$WORK/sent.tsv" 2>/dev/null || echo 0) DMs sent, $(wc -l <"$FAULTS") faults, $(cat "$WORK"/reads/*.ids | wc -l) reads logged"
  fi
done

# --- settle -----------------------------------------------------------------------------------
touch "$WORK/traffic-over"
say "traffic phase over: waiting for the fault in progress, stopping the senders"
wait "$fault_pid" 2>/dev/null
touch "$WORK/stop"
for p in "${bg_pids[@]}"; do wait "$p" 2>/dev/null; done
bg_pids=()
[[ -e $WORK/pids.txt ]] && mapfile -t -O "${#seen_pids[@]}" seen_pids < <(sort -u "$WORK/pids.txt")
note_pids

if ! mesh_ok; then
  action=$(recover)
  say "mesh not healthy at the end of traffic; user action: ${action:-none needed after waiting}"
fi
for id in "${SEAT_IDS[@]}"; do # a seat left sleeping or stopped gets its backlog now
  shoal seat start "$id" --timeout 10 >>"$EVENTS" 2>&1
done

# The broker and the secret, from the registry record `shoal up` wrote (docs/cli.md).
RECORD=$XDG_STATE_HOME/shoal/meshes/$SPACE.json
URL=$(jq -r '.url // empty' "$RECORD" 2>/dev/null)
SECRET=$(jq -r '.secretFile // empty' "$RECORD" 2>/dev/null)
[[ -n $URL && -n $SECRET ]] || die "no mesh record at $RECORD: the soak mesh is gone"
dump() { # STREAM FILTER OUT: appends to OUT what the stream holds after OUT's last message
  local from=1
  [[ -s $3 ]] && from=$(($(tail -n 1 "$3" | jq -r .seq) + 1))
  if "$PYTHON" "$here/stream_dump.py" --url "$URL" --nkey "$SECRET" --stream "$1" --filter "$2" \
    --from-seq "$from" >"$3.part"; then
    cat "$3.part" >>"$3" && rm -f "$3.part"
  else
    rm -f "$3.part"
    return 1
  fi
}
OUT=$WORK/out
: >"$OUT/dm_stream.jsonl"
: >"$OUT/receipts.jsonl"
collect() {
  dump "DM_$SPACE" "cotal.$SPACE.inst.>" "$OUT/dm_stream.jsonl" &&
    dump "WAKE_$SPACE" "cotal.$SPACE.rcpt.>" "$OUT/receipts.jsonl"
}
# DMs stored for our seats that have no receipt yet.
missing_receipts() {
  jq -n --slurpfile dm "$OUT/dm_stream.jsonl" --slurpfile rc "$OUT/receipts.jsonl" '
    ([$rc[] | .data.id] | map({(.): true}) | add // {}) as $have
    | [$dm[] | .data.id | select($have[.] | not)] | length'
}
settle_deadline=$(($(date +%s) + SETTLE))
while :; do
  if collect; then
    missing=$(missing_receipts)
    if [[ $missing == 0 ]]; then
      say "settled: every stored DM has a receipt"
      break
    fi
  else
    missing="?"
  fi
  if (($(date +%s) >= settle_deadline)); then
    say "settle time (${SETTLE}s) over: $missing stored DM(s) still without a receipt"
    break
  fi
  sleep 5
done

# --- evidence for the DMs without a receipt: the seats' journals and DM durables --------------
collect || die "cannot read the stored receipts and DMs from the broker"
shoal daemon status --json --timeout 5 >"$OUT/daemon_status.json" 2>/dev/null
shoal seat events --limit 10000 --json >"$OUT/seat_events.json" 2>/dev/null
: >"$OUT/journal.jsonl"
: >"$OUT/durables.jsonl"
for id in "${SEAT_IDS[@]}"; do
  j=$XDG_DATA_HOME/shoal/$SPACE/seats/$id/.shoal/.daemon-state.json
  if [[ -r $j ]]; then
    jq -c --arg seat "$id" '(.live[] | {seat: $seat, id, state, phase, outcome, reason, wake,
                                        historical: ((.body // "") | split("\n")[2] // "" | startswith("h"))}),
                           (.tombstones[] | {seat: $seat, id, state, phase, outcome, reason})' "$j" >>"$OUT/journal.jsonl" 2>/dev/null
  fi
  shoal deliver pending "$id" --json --timeout 5 2>/dev/null | jq -c --arg seat "$id" '{seat: $seat} + .' >>"$OUT/durables.jsonl" 2>/dev/null
done
for ((i = 0; i < NSEATS; i++)); do
  id=${SEAT_IDS[i]} name=${SEAT_NAMES[i]}
  awk -v seat="$id" '{printf "{\"seat\":\"%s\",\"id\":\"%s\",\"pid\":%d,\"t\":\"%s\"}\n", seat, $1, $2, $3}' \
    "$WORK/reads/$name.ids" >>"$OUT/reads.jsonl"
done
touch "$OUT/reads.jsonl" "$WORK/sent.tsv" "$WORK/posts.tsv"
jq -R -c 'split("\t") | {sender: (.[0] | tonumber), n: (.[1] | tonumber), to: .[2], t: (.[3] | tonumber),
          rc: (.[4] | tonumber), r: (.[5] | try fromjson catch null)}' "$WORK/sent.tsv" >"$OUT/sent.jsonl"
jq -R -c 'split("\t") | {n: (.[0] | tonumber), t: (.[1] | tonumber), rc: (.[2] | tonumber),
          r: (.[3] | try fromjson catch null)}' "$WORK/posts.tsv" >"$OUT/posts.jsonl"
acks_json=$(for id in "${SEAT_IDS[@]}"; do printf '%s\t%s\n' "$id" "${SEAT_ACK[$id]:-0}"; done |
  jq -R -s -c 'split("\n") | map(select(length > 0) | split("\t") | {(.[0]): (.[1] == "1")}) | add')

# --- the counts -------------------------------------------------------------------------------
jq -n -c \
  --argjson seconds "$DURATION" --argjson seed "$SEED" --argjson acks "$acks_json" \
  --arg ackBuilt "${ACK_FLAG:+yes}" --arg channel "$CHANNEL" \
  --slurpfile sent "$OUT/sent.jsonl" --slurpfile posts "$OUT/posts.jsonl" \
  --slurpfile dm "$OUT/dm_stream.jsonl" --slurpfile rc "$OUT/receipts.jsonl" \
  --slurpfile reads "$OUT/reads.jsonl" --slurpfile journal "$OUT/journal.jsonl" \
  --slurpfile durables "$OUT/durables.jsonl" --slurpfile faults "$FAULTS" '
  def token: tostring | split(":")[0] | split(" ")[0];
  def tally(f): reduce .[] as $x ({}; .[$x | f] += 1);
  ($acks | keys) as $seats
  # every DM stored for one of our seats (the broker is the truth of what was sent)
  | [$dm[] | {id: .data.id, seq, to: (.subject | split(".") | "\(.[3]).\(.[4])")}
     | select(.to as $t | $seats | index($t))] as $stored
  | ($stored | map({(.id): .}) | add // {}) as $storedBy
  # receipts per (id, recipient)
  | (reduce $rc[] as $r ({}; ($r.data.id + " " + ($r.data.recipient // "?")) as $k
       | if $r.data.surfacedAt != null then .[$k].surfaced = ($r.data.evidence // "unnamed")
         elif $r.data.failedAt != null then .[$k].failed = ($r.data.reason // "no reason given")
         else . end)) as $rcpt
  | (reduce $reads[] as $r ({}; .[$r.id][$r.seat] += 1)) as $readBy
  | (reduce $journal[] as $j ({}; .[$j.id + " " + $j.seat] = $j)) as $jr
  | ($durables | map({(.seat): .}) | add // {}) as $dur
  # one verdict per stored DM
  | [$stored[] | . as $m | ($m.id + " " + $m.to) as $k
     | ($rcpt[$k] // {}) as $o
     | ($readBy[$m.id] // {}) as $rb
     | {id: $m.id, to: $m.to, seq: $m.seq, ack: $acks[$m.to],
        surfaced: $o.surfaced, failed: $o.failed,
        reads: ($rb[$m.to] // 0),
        wrongSeat: ([$rb | keys[] | select(. != $m.to)] | length),
        pending: (if $o.surfaced or $o.failed then null
                  elif $jr[$k] then
                    ($jr[$k] | if .state == "terminal" then "receipt-missing (the seat journal says \(.outcome): \(.reason // "" | .[0:120]))"
                               else "held by the seat (\(.state)\(if .phase then "/" + .phase else "" end))" end)
                  elif (($dur[$m.to].ackFloor.streamSeq // 0) < $m.seq) then "at the broker (not yet acknowledged by the seat)"
                  else "lost (no receipt; the seat journal does not hold it; the broker has it acknowledged)" end)}] as $v
  | ($v | map(select(.pending != null))) as $pend
  | ($pend | map(select(.pending | startswith("held by") or startswith("at the broker")))) as $named
  | ([$sent[] | select(.r.id != null) | .r.id] | unique) as $cliIds
  | ($posts | map(select(.r.id != null) | .r.id)) as $postIds
  | {soak: {seconds: $seconds, seed: $seed, seats: ($seats | length),
            ackSeats: ([$acks[] | select(.)] | length), ackProtocol: ($ackBuilt == "yes")},
     sent: ($stored | length),
     sendsAnswered: ($cliIds | length),
     sendsRefused: ([$sent[] | select(.rc == 1)] | length),
     storedUnanswered: ([$stored[] | .id] - $cliIds | length),
     surfaced: ($v | map(select(.surfaced)) | {total: length, byEvidence: tally(.surfaced)}),
     failed: ($v | map(select(.failed and (.surfaced | not))) | {total: length, byReason: tally(.failed | token)}),
     failedThenSurfaced: ($v | map(select(.failed and .surfaced)) | length),
     pending: ($pend | {total: length, byReason: tally(.pending | split(" (")[0])}),
     read: ($v | map(select(.reads > 0)) | length),
     readTwice: ($v | map(select(.reads > 1)) | length),
     readByWrongSeat: ($v | map(select(.wrongSeat > 0)) | length),
     surfacedNeverRead: {ackSeats: ($v | map(select(.surfaced and .reads == 0 and .ack)) | length),
                         plainSeats: ($v | map(select(.surfaced and .reads == 0 and (.ack | not))) | length)},
     readButFailed: ($v | map(select(.failed and (.surfaced | not) and .reads > 0)) | {total: length, byReason: tally(.failed | token)}),
     noOutcome: (($pend | length) - ($named | length)),
     waitingSender: ([$sent[] | select(.sender == 1 and .r.id != null)] as $w
        | {sent: ($w | length), toldSurfaced: ($w | map(select(.r.surfacedAt != null)) | length),
           toldFailed: ($w | map(select(.r.failedAt != null)) | length),
           timedOut: ($w | map(select(.r.surfacedAt == null and .r.failedAt == null)) | length),
           toldSurfacedButNoSurfacedReceipt: ($w | map(select(.r.surfacedAt != null and
               (($rcpt[.r.id + " " + .r.to].surfaced) | not))) | length)}),
     posts: {posted: ($postIds | length),
             seatReads: ([$postIds[] as $p | $seats[] as $s | ($readBy[$p][$s] // 0)] as $c
               | {once: ($c | map(select(. == 1)) | length), twice: ($c | map(select(. > 1)) | length),
                  never: ($c | map(select(. == 0)) | length)}),
             # a copy never read is either failed loudly (the seat receipt names the reason)
             # or unexplained; the journal says where an unexplained one stopped
             neverRead: ([$postIds[] as $p | $seats[] as $s | select(($readBy[$p][$s] // 0) == 0)
               | {id: $p, seat: $s, failed: $rcpt[$p + " " + $s].failed,
                  surfaced: $rcpt[$p + " " + $s].surfaced,
                  journal: ($jr[$p + " " + $s] | if . then {state, outcome, reason, phase} else null end)}]
               | {failedLoudly: map(select(.failed and (.surfaced | not))) | length,
                  unexplained: map(select((.failed and (.surfaced | not)) | not)) | length,
                  examples: map(select((.failed and (.surfaced | not)) | not)) | .[0:5]}),
             failedReceipts: ([$rc[] | select(.data.failedAt != null and (.data.id as $i | $postIds | index($i)))]
               | {total: length, byReason: tally(.data.reason | token)}),
             surfacedThenFailed: ([$postIds[] as $p | $seats[] as $s | $rcpt[$p + " " + $s]
               | select(. != null and .surfaced != null and .failed != null)] | length),
             heldPullOnly: ([$journal[] | select(.state == "queued" and .wake == "channel-pull"
               and (.id as $i | $postIds | index($i)))] | length)},
     faults: ($faults | {total: length, byKind: tally(.kind),
              userActions: map(select(.action != "")) | length,
              unrecovered: map(select(.action | test("UNRECOVERED"))) | length}),
     examples: {readTwice: ($v | map(select(.reads > 1)) | .[0:5]),
                surfacedNeverRead: ($v | map(select(.surfaced and .reads == 0)) | .[0:5]),
                noOutcome: ($pend | map(select(.pending | (startswith("held by") or startswith("at the broker")) | not)) | .[0:5]),
                readByWrongSeat: ($v | map(select(.wrongSeat > 0)) | .[0:5])}}
  | .ok = (.readTwice == 0 and .surfacedNeverRead.ackSeats == 0 and .noOutcome == 0
           and .readByWrongSeat == 0 and .faults.unrecovered == 0)
' >"$OUT/counts.json" || die "counting failed (inputs in $OUT)"

c=$OUT/counts.json
q() { jq -r "$1" "$c"; }
echo
echo "=== soak counts ($(q .soak.seconds) s of traffic, $(q .soak.seats) seats, $(q .soak.ackSeats) with --ack, seed $(q .soak.seed)) ==="
printf '  %-34s %s\n' \
  "sent (DMs stored for the seats)" "$(q .sent)  ($(q .sendsAnswered) answered by \`shoal send\`, $(q .storedUnanswered) stored though the CLI gave no answer; $(q .sendsRefused) sends refused, not stored)" \
  "surfaced" "$(q '.surfaced.total')  $(q '.surfaced.byEvidence | to_entries | map("\(.key) \(.value)") | join(", ") | if . == "" then "" else "(" + . + ")" end')" \
  "failed" "$(q '.failed.total')  $(q '.failed.byReason | to_entries | map("\(.key) \(.value)") | join(", ") | if . == "" then "" else "(" + . + ")" end')" \
  "failed, then surfaced (upgraded)" "$(q .failedThenSurfaced)" \
  "still pending" "$(q '.pending.total')  $(q '.pending.byReason | to_entries | map("\(.key): \(.value)") | join(", ") | if . == "" then "" else "(" + . + ")" end')" \
  "read by a runtime" "$(q .read)" \
  "read twice               (must be 0)" "$(q .readTwice)" \
  "read by another seat     (must be 0)" "$(q .readByWrongSeat)" \
  "surfaced, never read, ack seats (must be 0)" "$(q .surfacedNeverRead.ackSeats)" \
  "surfaced, never read, plain seats" "$(q .surfacedNeverRead.plainSeats)  (a kill -9 between the recorder's read and its log write; README)" \
  "read but failed (allowed)" "$(q '.readButFailed.total')  $(q '.readButFailed.byReason | to_entries | map("\(.key) \(.value)") | join(", ") | if . == "" then "" else "(" + . + ")" end')" \
  "no outcome, no reason    (must be 0)" "$(q .noOutcome)" \
  "waiting sender (--wait surfaced=20)" "$(q '.waitingSender | "\(.sent) sent: told surfaced \(.toldSurfaced), failed \(.toldFailed), timed out \(.timedOut); told surfaced without a stored surfaced receipt \(.toldSurfacedButNoSurfacedReceipt)"')" \
  "channel posts" "$(q '.posts | "\(.posted) posted to #'"$CHANNEL"'; per seat: read once \(.seatReads.once), twice \(.seatReads.twice), never \(.seatReads.never) (\(.neverRead.failedLoudly) failed with a named reason, \(.neverRead.unexplained) unexplained); \(.heldPullOnly) held pull-only at the end; \(.failedReceipts.total) failed receipt(s)\(.failedReceipts.byReason | to_entries | map(" \(.key) \(.value)") | join(","))\(if .surfacedThenFailed > 0 then ", \(.surfacedThenFailed) of them after a surfaced one" else "" end)"')" \
  "faults injected" "$(q '.faults.total')  $(q '.faults.byKind | to_entries | map("\(.key) \(.value)") | join(", ") | if . == "" then "" else "(" + . + ")" end'); $(q .faults.userActions) needed a user action, $(q .faults.unrecovered) unrecovered"
if [[ $(q .ok) != true ]]; then
  echo
  echo "✗ soak: a count that must be 0 is not; examples:"
  jq '.examples | with_entries(select(.value | length > 0))' "$c"
  ok_exit=1
else
  ok_exit=0
fi
echo
jq -c 'del(.examples)' "$c"
exit "$ok_exit"
