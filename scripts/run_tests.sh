#!/usr/bin/env bash
# Runs the Criterion test binaries: the suites listed in ONCE_SUITES (pure C, and the soak) once,
# every other suite once per reset seed (TPU_SEED) on the RTL. The suites listed in MODEL_SUITES
# (the chip, pod, collective, training and random-program suites) run again under each model in
# MODELS (TPU_MODEL, seed 1):
# fast (the fast model alone must give the same results and cycles the tests assert) and check
# (the RTL and the fast model in lockstep, every visible event compared every cycle); a model
# written MODEL/N runs with the pods on N threads (TPU_THREADS: every assertion, results and
# cycles, must hold of the threaded pod too). Prints
# each suite's summary and a closing total line; exits non-zero if any test failed or crashed,
# or if no test ran.
# The lists name binaries (test_x); which runs a suite gets is the Makefile's choice, not its name's.
# usage: [MODELS="fast check"] [MODEL_SUITES="test_x ..."] [ONCE_SUITES="test_y ..."] scripts/run_tests.sh "SEED..." BIN...
set -u
seeds=$1
shift
models=${MODELS-}
model_suites=" ${MODEL_SUITES-} "
once_suites=" ${ONCE_SUITES-} "
passed=0
failed=0
runs=0
for bin in "$@"; do
  name=$(basename "$bin")
  case "$once_suites" in
    *" $name "*) run_seeds=1 ;;
    *) run_seeds=$seeds ;;
  esac
  runs_of=""
  for seed in $run_seeds; do runs_of="$runs_of rtl:$seed"; done
  case "$model_suites" in
    *" $name "*) for m in $models; do runs_of="$runs_of $m:1"; done ;;
  esac
  for run in $runs_of; do
    model=${run%%:*}
    seed=${run#*:}
    threads=1
    case "$model" in */*) threads=${model#*/} model=${model%%/*} ;; esac
    log=$(mktemp)
    start=$(date +%s)
    TPU_MODEL=$model TPU_THREADS=$threads TPU_SEED=$seed "$bin" --jobs 2 >"$log" 2>&1
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
      echo "FAIL $name (TPU_MODEL=$model TPU_THREADS=$threads TPU_SEED=$seed, exit $rc)"
    else
      label=$model
      [ "$threads" -gt 1 ] && label="$model/$threads"
      printf 'ok   %-28s %-6s seed %-3s %4s tests  %4ss\n' "$name" "$label" "$seed" "$tested" "$secs"
    fi
    rm -f "$log"
  done
done
echo "test: $runs suite runs"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
