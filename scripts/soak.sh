#!/usr/bin/env bash
# The long runs (`make soak`), with their figures: PROGRAMS random program sets (nine in ten
# on a lone 4x4 chip, one in ten on a 2x2 pod, the two in parallel), 10^6 fuzzed .npy
# inputs, and a minute of each other fuzzer. Stops with exit 1 at the first finding.
# usage: scripts/soak.sh TPUSIM FUZZ_DIR PROGRAMS
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
RUNS=1000000 scripts/fuzz.sh "$fuzz" 60 npy
scripts/fuzz.sh "$fuzz" "${FUZZ_TIME:-60}" cli cmdprog digits
echo "soak: no finding"
