#!/usr/bin/env bash
# Runs every fuzz target for N seconds over a temporary COPY of its seed corpus (the repo is
# never written), with crash artifacts in a temporary directory. Exits non-zero on any crash,
# sanitizer report or fuzz-property failure, keeping the work directory for the reproducer.
#
#   fuzz/run.sh <seconds-per-target> [build-dir]      (build-dir defaults to build-fuzz)
#
# Build first: cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_all
set -uo pipefail

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: fuzz/run.sh <seconds-per-target> [build-dir]" >&2
  exit 2
fi
seconds=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${2:-build-fuzz}
[[ -d "$build" ]] || build="$root/$build"
if [[ ! -d "$build/fuzz" ]]; then
  echo "✗ no fuzz build in '$build': run cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_all" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/shoal-fuzz.XXXXXX")
failed=0

# target:corpus-dir:dictionary(- for none):required|optional. Optional targets belong to other
# modules (built from their own CMakeLists into fuzz_all) and are skipped when absent.
targets=(
  fuzz_subject:subject:subject:required
  fuzz_message:message:json:required
  fuzz_records:records:json:required
  fuzz_journal_loader:journal:json:required
)
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
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
    "$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      "${dict_args[@]}" -artifact_prefix="$dir/artifacts/" \
      "$dir/corpus" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $rc -eq 0 && -n "$runs" ]] && ! ls "$dir/artifacts/"* >/dev/null 2>&1; then
    echo "✓ $target: $runs runs in $seconds s, no crash"
  else
    failed=1
    echo "✗ $target: exit $rc; reproducer(s) in $dir/artifacts/, log $log:"
    grep -E "ERROR|fuzz property failed|SUMMARY|runtime error|Test unit written" "$log" | head -20
  fi
done

if [[ $failed -eq 0 ]]; then
  rm -rf "$work"
else
  echo "! work directory kept: $work"
fi
exit $failed
