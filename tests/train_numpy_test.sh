#!/usr/bin/env bash
# Trains the digits MLP on one 16x16-MXU chip (a 1x1 pod; 60 steps, batch 64, lr 0.1) with
# --export, then checks the chip's final parameters and loss curve against an independent
# numpy trainer in float64 (scripts/train_numpy.py; its tolerances are valid for stable
# runs like this one, see the script). Prints one line on success; on failure, the
# script's table and its reasons. Exit status: the script's (0 ok, 1 out of tolerance,
# 2 bad input); 1 when the simulation itself fails.
# usage: tests/train_numpy_test.sh   (from the project root; TPUSIM, PYTHON override)
set -euo pipefail
tpusim=${TPUSIM:-build/tpusim}
python=${PYTHON:-/usr/bin/python3}
script="$(cd "$(dirname "$0")/.." && pwd)/scripts/train_numpy.py"
steps=60 batch=64 lr=0.1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

start=$SECONDS
if ! "$tpusim" train --pod 1x1 --mxu 16x16 --steps $steps --batch $batch --lr $lr \
    --export "$tmp" --loss-csv "$tmp/loss.csv" >"$tmp/train.out" 2>"$tmp/train.err"; then
  echo "train_numpy: FAIL: $tpusim train failed:" >&2
  tail -n 20 "$tmp/train.err" >&2
  exit 1
fi
rc=0
"$python" "$script" "$tmp" "$tmp/loss.csv" --batch $batch --lr $lr >"$tmp/check.out" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
  cat "$tmp/check.out" >&2
  exit $rc
fi
figures=$(tail -n 1 "$tmp/check.out")
echo "train_numpy: ok (digits 1x1 16x16, $steps steps, batch $batch, lr $lr; chip vs float64: ${figures#train_numpy: ok: }; $((SECONDS - start)) s)"
