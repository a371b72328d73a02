#!/usr/bin/env bash
# The PyTorch check on the small models (docs/models.md, "Checking against PyTorch"): exports
# them into a temporary directory (scripts/export_models.py), then for each
#   - the exported PyTorch output checks against the module check_pytorch.py rebuilds from the
#     seed with rel_l2 exactly 0 (the rebuild is the exported network),
#   - the bf16 emulation of the chip (--emulate-bf16) passes,
#   - a model of another seed fails (exit 1), an input of the wrong shape is refused (exit 2);
# the opset-17 variant's input and output are transformer_small's; and check_pytorch.py --self-test: each planted error fails, the emulation passes.
# Prints one line on success; on failure what failed. Exit status 0 ok, 1 a check failed.
# usage: tests/pytorch_check_test.sh   (from the project root; PYTHON overrides /usr/bin/python3)
set -euo pipefail
python=${PYTHON:-/usr/bin/python3}
scripts="$(cd "$(dirname "$0")/.." && pwd)/scripts"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pytorch_check: FAIL: $*" >&2; [ -s "$tmp/log" ] && tail -n 30 "$tmp/log" >&2; exit 1; }
# expect RC CMD...: runs CMD, output to $tmp/log, and fails unless it exits with RC.
expect() {
  local want=$1 rc=0; shift
  "$@" >"$tmp/log" 2>&1 || rc=$?
  [ "$rc" -eq "$want" ] || fail "exit $rc, expected $want: ${*#"$python "}"
}

start=$SECONDS
expect 0 "$python" "$scripts/export_models.py" --out "$tmp/m" --only cnn_small,transformer_small,transformer_small_opset17
for f in cnn_small transformer_small transformer_small_opset17; do
  for s in .onnx _input.npy _output.npy; do [ -s "$tmp/m/$f$s" ] || fail "export wrote no $f$s"; done
done
[ -z "$(find "$tmp/m" -name '.*')" ] || fail "export left temporary files: $(ls -A "$tmp/m")"

check="$python $scripts/check_pytorch.py"
# json FIELD: the check's metric FIELD from the --json line in $tmp/log
json() { "$python" -c "import json, sys; print(json.load(open(sys.argv[1]))['metrics'][sys.argv[2]])" "$tmp/log" "$1"; }
summary=""
for f in cnn_small transformer_small; do
  x="$tmp/m/${f}_input.npy"
  expect 0 $check --model "$f" --input "$x" --output "$tmp/m/${f}_output.npy" --json
  [ "$(json rel_l2)" = 0.0 ] || fail "$f: the exported output differs from the rebuilt module's: $(cat "$tmp/log")"
  expect 0 $check --model "$f" --input "$x" --emulate-bf16 "$tmp/${f}_bf16.npy"
  expect 0 $check --model "$f" --input "$x" --output "$tmp/${f}_bf16.npy" --json
  summary+=" $f bf16 rel_l2 $(printf %.2e "$(json rel_l2)");"
  expect 1 $check --model "$f" --input "$x" --output "$tmp/${f}_bf16.npy" --seed 1
done
# The opset-17 export is of the same module, input and output.
for s in _input.npy _output.npy; do
  cmp -s "$tmp/m/transformer_small$s" "$tmp/m/transformer_small_opset17$s" || fail "transformer_small_opset17$s differs from transformer_small$s"
done
# bad input: another model's input (wrong shape), a missing file, an int array
expect 2 $check --model cnn_small --input "$tmp/m/transformer_small_input.npy" --output "$tmp/m/cnn_small_output.npy"
grep -q 'expected \[B, 3, 16, 16\]' "$tmp/log" || fail "the wrong-shape message does not name the shape: $(cat "$tmp/log")"
expect 2 $check --model cnn_small --input "$tmp/none.npy" --output "$tmp/m/cnn_small_output.npy"
"$python" -c "import numpy as np; np.save('$tmp/int.npy', np.zeros((2, 10), np.int32))"
expect 2 $check --model cnn_small --input "$tmp/m/cnn_small_input.npy" --output "$tmp/int.npy"

expect 0 $check --self-test
planted=$(grep -c 'FAIL (as planted)' "$tmp/log")
[ "$planted" -ge 11 ] || fail "self-test: $planted planted errors caught, expected 11"
echo "pytorch_check: ok (cnn_small, transformer_small, its opset-17 export:$summary $planted planted errors caught; $((SECONDS - start)) s)"
