#!/usr/bin/env bash
# Runs every fuzz target over a temporary COPY of its seed corpus (the repo is never written),
# with crash artifacts in a temporary directory. Exits non-zero on any crash, sanitizer report
# or fuzz-property failure, keeping the work directory for the reproducer.
#
#   fuzz/run.sh <seconds-per-target> [build-dir]   each target for that long (make fuzz-smoke,
#                                                  make fuzz)
#   fuzz/run.sh --runs N [build-dir]               each target for N executions, no time limit
#                                                  (make fuzz-long: N = 10^7), with a progress
#                                                  line about every minute and a total at the end
#   FUZZ_TARGETS="fuzz_sse fuzz_subject" fuzz/run.sh …   only those targets, in that order
#
# build-dir defaults to build-fuzz. Build first:
#   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_all
set -uo pipefail

usage() {
  echo "usage: fuzz/run.sh <seconds-per-target> [build-dir]" >&2
  echo "       fuzz/run.sh --runs <executions-per-target> [build-dir]" >&2
  exit 2
}

runs=""
if [[ $# -ge 1 && $1 == --runs ]]; then
  [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || usage
  runs=$2
  shift 2
else
  [[ $# -ge 1 && "$1" =~ ^[0-9]+$ ]] || usage
  seconds=$1
  shift
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build-fuzz}
[[ -d "$build" ]] || build="$root/$build"
if [[ ! -d "$build/fuzz" ]]; then
  echo "✗ no fuzz build in '$build': run cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_all" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-fuzz.XXXXXX")
failed=0
total_runs=0
started=$(date +%s)

# Seconds since the epoch, with milliseconds.
now() { date +%s.%3N; }

# Runs the fuzzer command in the background and prints a progress line about every minute
# (libFuzzer's last `#N` count: it logs at powers of two and at every new coverage).
run_with_progress() {
  local target=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1 &
  local pid=$! begin=$SECONDS next=60
  while kill -0 "$pid" 2>/dev/null; do
    sleep 0.2
    if ((SECONDS - begin >= next)); then
      local seen
      seen=$(grep -o '^#[0-9]*' "$log" | tail -1)
      echo "  … $target: $((SECONDS - begin)) s, ${seen:-#0} runs so far"
      next=$((next + 60))
    fi
  done
  wait "$pid"
}

# target:corpus-dir:dictionary(- for none):required|optional. Optional targets belong to other
# modules (built from their own CMakeLists into fuzz_all) and are skipped when absent.
targets=(
  fuzz_subject:subject:subject:required
  fuzz_message:message:json:required
  fuzz_records:records:json:required
  fuzz_journal_loader:journal:json:required
  fuzz_claude_stream:claude_stream:runtime:required
  fuzz_codex_rpc:codex_rpc:runtime:required
  fuzz_opencode_events:opencode:runtime:required
  fuzz_sse:sse:sse:required
  fuzz_json_rpc:json_rpc:mcp:required
  fuzz_mcp_http:mcp_http:mcp:required
  fuzz_line_reader:line_reader:-:required
  fuzz_control_request:control:mcp:required
)
# FUZZ_TARGETS="a b": only those targets, in that order (e.g. to run the long tier in parts).
if [[ -n ${FUZZ_TARGETS:-} ]]; then
  chosen=()
  for name in $FUZZ_TARGETS; do
    match=""
    for spec in "${targets[@]}"; do [[ ${spec%%:*} == "$name" ]] && match=$spec; done
    [[ -n $match ]] || { echo "✗ FUZZ_TARGETS names no target \`$name\`" >&2; exit 2; }
    chosen+=("$match")
  done
  targets=("${chosen[@]}")
fi
count=0
for spec in "${targets[@]}"; do
  IFS=: read -r target corpus dict need <<<"$spec"
  bin=$(find "$build" -maxdepth 3 -type f -name "$target" -perm -u+x 2>/dev/null | head -1)
  if [[ -z "$bin" ]]; then
    if [[ $need == required ]]; then
      echo "✗ $target: not built under $build; build the fuzz_all target"
      failed=1
    else
      echo "! $target: not built, skipped"
    fi
    continue
  fi
  dict_args=()
  [[ $dict == - ]] || dict_args=(-dict="$root/fuzz/dict/$dict.dict")
  dir="$work/$target"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$root/fuzz/corpus/$corpus/"* "$dir/corpus/"
  log="$dir/log"
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
  common=(-timeout=10 -print_final_stats=1 "${dict_args[@]}" -artifact_prefix="$dir/artifacts/")
  if [[ -n $runs ]]; then
    echo "… running $target ($runs runs)"
    t0=$(now)
    run_with_progress "$target" "$log" "$bin" -runs="$runs" "${common[@]}" "$dir/corpus"
    rc=$?
    elapsed=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  else
    "$bin" -max_total_time="$seconds" "${common[@]}" "$dir/corpus" >"$log" 2>&1
    rc=$?
  fi
  done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $rc -eq 0 && -n "$done_runs" ]] && ! ls "$dir/artifacts/"* >/dev/null 2>&1; then
    if [[ -n $runs ]]; then
      rate=$(awk -v n="$done_runs" -v t="$elapsed" 'BEGIN { printf "%d", (t > 0 ? n / t : n) }')
      echo "✓ $target: $done_runs runs in $elapsed s ($rate/s), no crash"
      total_runs=$((total_runs + done_runs))
      count=$((count + 1))
    else
      echo "✓ $target: $done_runs runs in $seconds s, no crash"
    fi
  else
    failed=1
    echo "✗ $target: exit $rc; reproducer(s) in $dir/artifacts/, log $log:"
    grep -E "ERROR|fuzz property failed|SUMMARY|runtime error|Test unit written" "$log" | head -20
  fi
done

if [[ -n $runs ]]; then
  verdict=$([[ $failed -eq 0 ]] && echo "no crash" || echo "FAILURES above")
  echo "total: $count targets, $total_runs runs in $(($(date +%s) - started)) s, $verdict"
fi
if [[ $failed -eq 0 ]]; then
  rm -rf "$work"
else
  echo "! work directory kept: $work"
fi
exit $failed
