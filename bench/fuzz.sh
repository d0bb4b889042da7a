#!/bin/bash
# Runs every fuzz harness (test/fuzz) for MINUTES each, in an ASan + UBSan
# build made with clang (build-fuzz/, configured on first use), starting from
# the committed corpus plus fresh seeds (bench/fuzz_seeds.py), and merges
# what found new coverage back into test/fuzz/corpus/<harness>/ (libFuzzer's
# -merge=1: the corpus stays minimal, runs accumulate). Findings (crash-*,
# timeout-*, oom-* files) land in build-fuzz/findings/<harness>/; each run's
# last status line goes to build-fuzz/fuzz-log.txt.
#
#   bench/fuzz.sh MINUTES [HARNESS...]     (default: all seven)
#
# FUZZ_PARALLEL=1 runs the harnesses side by side (one process each) instead
# of one after another. The issue's budgets are in CPU minutes, so each run's
# log line records the CPU time its fuzzer really used (user + system, from
# /usr/bin/time), which is less than MINUTES when it shared the cores.
# FUZZ_TIMEOUT=S (default 10) is libFuzzer's -timeout, which is wall time:
# on a machine shared with builds, a run at low priority can be starved past
# 10 s on an input that takes 0.2 s alone, and a timeout ends the run. Such
# runs use a longer one, and every timeout-* input is run alone again: only
# one that still takes over 10 s is a hang.
set -euo pipefail
minutes=${1:?usage: bench/fuzz.sh MINUTES [HARNESS...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
. "$root/bench/fuzz_harnesses.sh"
# The sanitizer and libFuzzer runtimes are not in the build's package set
# (CI only replays the corpus on the normal build).
if ! ls /usr/lib/llvm-22/lib/clang/22/lib/linux/libclang_rt.asan-x86_64.a \
        /usr/lib/llvm-22/lib/clang/22/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "bench/fuzz.sh: needs clang 22's sanitizer and libFuzzer runtimes:" \
       "apt-get install -y libclang-rt-22-dev libfuzzer-22-dev" >&2
  exit 1
fi
harnesses=${*:-$all_harnesses}
build_harnesses "$root" "$build" OFLOW_FUZZ "$(nproc)" $harnesses

seeds=$build/seeds
rm -rf "$seeds"
/usr/bin/python3 "$root/bench/fuzz_seeds.py" "$seeds" >/dev/null
# allow_user_poisoning=0: LLVM's allocators poison their slabs' free space
# in code compiled here with ASan, but libMLIR.so (Debian's, uninstrumented)
# allocates from the same slabs without unpoisoning: a false report in
# StringAttr::get whenever an attribute built here opened a new slab.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fuzz_one() {
  local h=$1 corpus work findings maxlen log stats execs speed cpu
  corpus=$root/test/fuzz/corpus/$h
  work=$build/work/$h
  findings=$build/findings/$h
  mkdir -p "$corpus" "$work" "$findings"
  # -max_len: the largest seed (models of the node tests, lit inputs).
  maxlen=$( (ls -l "$seeds/$h" "$corpus" 2>/dev/null | awk '{print $5}'; echo 4096) | sort -n | tail -1)
  log=$build/work/$h.log
  # Find: new inputs go to $work; crashes to $findings.
  /usr/bin/time -o "$build/work/$h.time" -f "%U %S" \
    "$build/test/fuzz/oflow-fuzz-$h" "$work" "$corpus" "$seeds/$h" \
      -max_total_time=$((minutes * 60)) -max_len="$maxlen" -rss_limit_mb=2048 \
      -timeout="${FUZZ_TIMEOUT:-10}" -artifact_prefix="$findings/" -print_final_stats=1 \
      >"$log" 2>&1 || echo "$h: stopped on a finding (see $findings, $log)"
  # Keep: only what adds coverage to the committed corpus.
  "$build/test/fuzz/oflow-fuzz-$h" -merge=1 "$corpus" "$work" "$seeds/$h" -max_len="$maxlen" \
      -artifact_prefix="$findings/merge-" \
      -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" >/dev/null 2>&1 || true
  stats=$(grep -E "^#[0-9]+.*(DONE|pulse|NEW|REDUCE)" "$log" | tail -1 || true)
  execs=$(grep -E "stat::number_of_executed_units" "$log" | awk '{print $2}' | tail -1 || true)
  speed=$(grep -E "stat::average_exec_per_sec" "$log" | awk '{print $2}' | tail -1 || true)
  cpu=$(awk '/^[0-9.]+ [0-9.]+$/ {printf "%.1f", ($1 + $2) / 60}' "$build/work/$h.time")
  echo "$(date -u +%F) $h minutes=$minutes cpu_minutes=${cpu:-?} execs=${execs:-?} exec_per_s=${speed:-?} corpus=$(ls "$corpus" | wc -l) findings=$(ls "$findings" | wc -l) last: $stats" \
    | tee -a "$build/fuzz-log.txt"
}

if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  for h in $harnesses; do fuzz_one "$h" & done
  wait
else
  for h in $harnesses; do fuzz_one "$h"; done
fi
