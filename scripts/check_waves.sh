#!/usr/bin/env bash
# Every .gtkw session shows only signals its trace has (catches sessions left behind by RTL
# changes): writes the traces of 'make waves' and a small 'make sim' under OUTDIR and checks
# each session against its trace. usage: scripts/check_waves.sh OUTDIR
set -euo pipefail
out=$1
tpusim=build/tpusim
for tool in fst2vcd python3; do
  command -v "$tool" >/dev/null || { echo "error: '$tool' is not installed; run 'make deps'" >&2; exit 1; }
done
mkdir -p "$out"
"$tpusim" gemm --level mxu --mxu 4x4 --m 6 --k 9 --n 7 --seed 1 --trace "$out/mxu.fst" >/dev/null
"$tpusim" dot --n 16 --seed 1 --trace "$out/arith.fst" >/dev/null
"$tpusim" net --pod 4x4 --rate 0.4 --packet-flits 2 --warmup 20 --cycles 200 --trace "$out/router.fst" --trace-node 5 >/dev/null
"$tpusim" gemm --mxu 4x4 --m 6 --k 9 --n 7 --seed 1 --trace "$out/chip.fst" >/dev/null
"$tpusim" step --pod 2x2 --mxu 16x16 --m 16 --k 16 --n 16 --trace "$out/step.fst" >/dev/null 2>&1
"$tpusim" train --pod 2x2 --dp 2 --mp 2 --mxu 16x16 --batch 32 --steps 1 --trace "$out/train.fst" >/dev/null 2>&1
for w in mxu arith router chip step train; do python3 scripts/check_gtkw.py "waves/$w.gtkw" "$out/$w.fst"; done
echo "check-waves: every session's signals are in its trace (mxu, arith, router, chip, step, train)"
