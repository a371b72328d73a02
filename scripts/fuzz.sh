#!/usr/bin/env bash
# Runs libFuzzer harnesses for a time each (`make fuzz`, `make soak`): fuzzer NAME starts
# from the seeds in tests/fuzz/corpus/NAME plus its working corpus in FUZZ_DIR/corpus/NAME,
# and writes what it finds to FUZZ_DIR/findings/NAME/. Prints each fuzzer's executions;
# exits 1 if any fuzzer found a crash, a hang or a failed check (docs/robustness.md says how
# to reproduce one and turn it into a regression test).
# usage: scripts/fuzz.sh FUZZ_DIR SECONDS NAME... (RUNS=N: stop after N inputs instead)
set -u
dir=$(realpath "$1") secs=$2 seeds=$(realpath tests/fuzz/corpus)
shift 2
status=0
for name in "$@"; do
  bin=$dir/fuzz_$name
  mkdir -p "$dir/corpus/$name" "$dir/findings/$name"
  log=$(mktemp)
  limit=(-max_total_time="$secs")
  [ -n "${RUNS:-}" ] && limit=(-runs="$RUNS" -max_total_time=$((secs * 100)))
  echo "fuzz: $name for ${RUNS:+$RUNS inputs, at most }${secs}${RUNS:+00} s..." >&2
  "$bin" "${limit[@]}" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 -close_fd_mask=3 \
    -artifact_prefix="$dir/findings/$name/" "$dir/corpus/$name" "$seeds/$name" >"$log" 2>&1
  rc=$?
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -n 1)
  rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log" | tail -n 1)
  found=$(find "$dir/findings/$name" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  echo "fuzz: $name: ${execs:-0} inputs (${rate:-0}/s), exit $rc, $found finding(s) in $dir/findings/$name"
  if [ "$rc" != 0 ] || [ "$found" != 0 ]; then
    status=1
    grep -E "ERROR|SUMMARY|fuzz_|Test unit written" "$log" | head -n 20
  fi
  rm -f "$log"
done
exit $status
