#!/usr/bin/env bash
# `tpusim infer` against PyTorch (make test; docs/models.md, "Checking against PyTorch"): the
# small CNN run on the chips (fast model) must pass scripts/check_pytorch.py against the original
# module, and each planted error (scripts/plant_onnx.py: a wrong stride, padding, a dropped bias,
# a transposed weight, a missing residual), run through the same path -- bit-exact against the
# golden model, which runs the planted graph too -- must fail it.
# usage: tests/infer_pytorch_test.sh [TPUSIM]
set -euo pipefail
tpusim=${1:-build/tpusim}
py=/usr/bin/python3
models=build/models
tmp=$(mktemp -d /tmp/infer_pytorch_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

infer() { # MODEL.onnx OUT.npy
  "$tpusim" infer --onnx "$1" --input $models/cnn_small_input.npy --out "$2" --mxu 16x16 --model fast --json \
    >"$tmp/run.json" 2>"$tmp/run.log" || { echo "infer_pytorch: tpusim infer on $1 failed:"; cat "$tmp/run.log"; return 1; }
  grep -q '"bit_exact":true' "$tmp/run.json" || { echo "infer_pytorch: $1 is not bit-exact"; return 1; }
}

infer $models/cnn_small.onnx "$tmp/y.npy"
if $py scripts/check_pytorch.py --model cnn_small --input $models/cnn_small_input.npy --output "$tmp/y.npy" \
  >"$tmp/check.txt" 2>&1; then
  echo "infer_pytorch: cnn_small agrees with PyTorch: $(tail -1 "$tmp/check.txt")"
else
  echo "infer_pytorch: FAIL cnn_small disagrees with PyTorch:"; cat "$tmp/check.txt"; fail=1
fi
for kind in stride padding bias transpose residual; do
  $py scripts/plant_onnx.py "$kind" $models/cnn_small.onnx "$tmp/$kind.onnx"
  infer "$tmp/$kind.onnx" "$tmp/$kind.npy" || { fail=1; continue; }
  set +e
  $py scripts/check_pytorch.py --model cnn_small --input $models/cnn_small_input.npy --output "$tmp/$kind.npy" \
    >"$tmp/check_$kind.txt" 2>&1
  rc=$?
  set -e
  if [ $rc = 1 ]; then echo "infer_pytorch: planted $kind caught: $(grep -m1 -i fail "$tmp/check_$kind.txt" || tail -1 "$tmp/check_$kind.txt")"
  else echo "infer_pytorch: FAIL planted $kind not caught (check_pytorch exit $rc):"; cat "$tmp/check_$kind.txt"; fail=1; fi
done
exit $fail
