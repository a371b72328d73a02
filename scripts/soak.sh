#!/usr/bin/env bash
# The long runs (`make soak`), with their figures: PROGRAMS random program sets on the RTL
# (nine in ten on a lone 4x4 chip, one in ten on a 2x2 pod, the two in parallel); LOCKSTEP
# sets (default 10,000) each on a lone 4x4 chip, a lone 16x16 chip, a 2x2 pod and a 4x4 pod
# with every chip's RTL and fast model in lockstep (--model check: every visible event
# compared every cycle, valid, invalid and mutated sets alike); 10^6 fuzzed .npy inputs, and a
# minute of each other fuzzer. Stops with exit 1 at the first finding.
# usage: [LOCKSTEP=N] scripts/soak.sh TPUSIM FUZZ_DIR PROGRAMS
set -euo pipefail
tpusim=$1 fuzz=$2 programs=$3
out=build/soak
mkdir -p "$out"
pod=$((programs / 10))
lone=$((programs - pod))
seed=${SOAK_SEED:-$(date +%s)}
echo "soak: $lone program sets on a lone chip and $pod on a 2x2 pod (seed $seed)..." >&2
start=$(date +%s)
"$tpusim" randprog --pod 1x1 --mxu 4x4 --count "$lone" --seed "$seed" --json >"$out/randprog_lone.json" 2>"$out/randprog_lone.log" &
lone_pid=$!
"$tpusim" randprog --pod 2x2 --mxu 4x4 --count "$pod" --seed "$((seed + 1000000000))" --json >"$out/randprog_pod.json" \
  2>"$out/randprog_pod.log" &
pod_pid=$!
status=0
wait $lone_pid || status=1
wait $pod_pid || status=1
secs=$(($(date +%s) - start))
for f in lone pod; do
  echo "soak: randprog $f: $(cat "$out/randprog_$f.json")"
  grep -v '^randprog:' "$out/randprog_$f.log" || true
done
echo "soak: $programs program sets in $secs s ($((programs * 60 / (secs > 0 ? secs : 1))) per minute, two processes)"
[ $status = 0 ] || { echo "soak: a program set was not as judged (above)" >&2; exit 1; }

# Lockstep: two runs at a time, the slow 4x4 pod beside the others in turn.
lockstep=${LOCKSTEP:-10000}
echo "soak: $lockstep program sets each in lockstep (RTL and fast model) on 1x1 4x4, 1x1 16x16, 2x2 and 4x4 pods..." >&2
start=$(date +%s)
run_lockstep() {  # name pod mxu seed
  "$tpusim" randprog --model check --pod "$2" --mxu "$3" --count "$lockstep" --seed "$4" --json >"$out/lockstep_$1.json" \
    2>"$out/lockstep_$1.log"
}
run_lockstep pod4x4 4x4 4x4 "$((seed + 3000000000))" &
big_pid=$!
status=0
run_lockstep lone4 1x1 4x4 "$((seed + 4000000000))" || status=1
run_lockstep lone16 1x1 16x16 "$((seed + 5000000000))" || status=1
run_lockstep pod2x2 2x2 4x4 "$((seed + 6000000000))" || status=1
wait $big_pid || status=1
secs=$(($(date +%s) - start))
for f in lone4 lone16 pod2x2 pod4x4; do
  echo "soak: lockstep $f: $(cat "$out/lockstep_$f.json")"
  grep -v '^randprog:' "$out/lockstep_$f.log" || true
done
echo "soak: $((4 * lockstep)) program sets in lockstep in $secs s"
[ $status = 0 ] || { echo "soak: the fast model diverged from the RTL, or a set was not as judged (above)" >&2; exit 1; }
RUNS=1000000 scripts/fuzz.sh "$fuzz" 60 npy
scripts/fuzz.sh "$fuzz" "${FUZZ_TIME:-60}" cli cmdprog digits
echo "soak: no finding"
