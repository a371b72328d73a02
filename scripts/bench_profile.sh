#!/usr/bin/env bash
# Profiling benchmarks (docs/profiling.md, "Figures"): the host-time cost of --op-profile and
# --profile on the 4x4 training step and on a 16x16 pod's all-reduce, the trace's size per chip
# and million cycles, and the pictures drawn from traces (the link heat map of three training
# steps, chip 5's timeline in the data-parallel step) into OUT/profile/.
# usage: scripts/bench_profile.sh OUTDIR
set -euo pipefail
out=$1/profile
mkdir -p "$out"
tpusim=build/tpusim
echo "== profiling: overhead and trace size (scripts/profile_overhead.sh, best of 3)" >&2
scripts/profile_overhead.sh -n 3 "$tpusim" train --pod 4x4 --dp 4 --mp 4 --mxu 16x16 --batch 128 --steps 10 --seed 1 \
  --model fast | tee "$out/overhead_train.txt"
scripts/profile_overhead.sh -n 3 "$tpusim" collective --pod 16x16 --mxu 16x16 --op allreduce --algo torus2d \
  --bytes 1048576 --model fast | tee "$out/overhead_16x16.txt"
echo "== profiling: pictures (scripts/plot_profile.py)" >&2
"$tpusim" train --pod 4x4 --dp 4 --mp 4 --mxu 16x16 --batch 128 --steps 3 --seed 1 --model fast --quiet \
  --profile "$out/train.json" >"$out/train.txt"
"$tpusim" step --pod 4x4 --mxu 16x16 --m 128 --k 128 --n 128 --algo torus2d --seed 1 --model fast --quiet \
  --profile "$out/step.json" >"$out/step.txt"
/usr/bin/python3 scripts/plot_profile.py heatmap "$out/train.json" "$out/profile_heatmap.png" \
  "link utilisation over the 4x4 torus: 3 training steps (dp 4 along X, mp 4 along Y)"
/usr/bin/python3 scripts/plot_profile.py timeline "$out/step.json" "$out/profile_timeline.png" 5 \
  "chip 5 of a 4x4 data-parallel step: GEMM, copies, all-reduce"
echo "profiling: pictures in $out (docs/img/profile_*.png are copies)"
