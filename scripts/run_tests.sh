#!/usr/bin/env bash
# Runs the Criterion test binaries: suites named *_golden or *_soak once, every other suite once per
# reset seed (TPU_SEED). Prints each suite's summary and a closing total line; exits
# non-zero if any test failed or crashed, or if no test ran.
# usage: scripts/run_tests.sh "SEED..." BIN...
set -u
seeds=$1
shift
passed=0
failed=0
runs=0
for bin in "$@"; do
  name=$(basename "$bin")
  case "$name" in
    *_golden | *_soak) run_seeds=1 ;;
    *) run_seeds=$seeds ;;
  esac
  for seed in $run_seeds; do
    log=$(mktemp)
    start=$(date +%s)
    TPU_SEED=$seed "$bin" --jobs 2 >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    line=$(grep -a 'Synthesis:' "$log" | tail -n 1)
    tested=$(sed -nE 's/.*Tested: ([0-9]+).*/\1/p' <<<"$line")
    passing=$(sed -nE 's/.*Passing: ([0-9]+).*/\1/p' <<<"$line")
    tested=${tested:-0}
    passing=${passing:-0}
    runs=$((runs + 1))
    passed=$((passed + passing))
    failed=$((failed + tested - passing))
    if [ "$rc" -ne 0 ] || [ "$tested" -eq 0 ] || [ "$passing" -ne "$tested" ]; then
      cat "$log"
      [ "$tested" -eq "$passing" ] && failed=$((failed + 1))  # crashed before a summary
      echo "FAIL $name (TPU_SEED=$seed, exit $rc)"
    else
      printf 'ok   %-28s seed %-3s %4s tests  %4ss\n' "$name" "$seed" "$tested" "$secs"
    fi
    rm -f "$log"
  done
done
echo "test: $runs suite runs"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
