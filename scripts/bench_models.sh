#!/usr/bin/env bash
# The reference models on v3 chips (fast model): ResNet-50 at batch 8 and 32 and BERT-base at
# batch 8, sequence 128, on one chip, then data parallel on 2x2 and 4x4 slices (docs/models.md,
# "Figures"). Writes each run's JSON under OUTDIR/models/, a per-layer table beside the shape's
# bound, and the per-layer utilisation chart; prints the summary.
# usage: scripts/bench_models.sh OUTDIR [TPUSIM]
set -euo pipefail
out=$1/models
tpusim=${2:-build/tpusim}
py=/usr/bin/python3
mkdir -p "$out"
field() { sed -nE "s/.*\"$1\":([0-9.e+-]+|true|false).*/\1/p" | head -1; }

run() { # NAME ARGS...: one inference, its JSON kept, its time and peak memory measured
  local name=$1
  shift
  echo "== tpusim infer $* --json" >&2
  if /usr/bin/time -f '%e %M' -o "$out/$name.time" "$tpusim" infer "$@" --json >"$out/$name.json" 2>"$out/$name.log"; then
    :
  else
    echo "bench_models: $name failed:" >&2
    tail -3 "$out/$name.log" >&2
    return 1
  fi
}

status=0
for spec in "resnet50_b8 build/models/resnet50.onnx 8 1x1" "resnet50_b32 build/models/resnet50.onnx 32 1x1" \
            "resnet50_b8_2x2 build/models/resnet50.onnx 32 2x2" "resnet50_b8_4x4 build/models/resnet50.onnx 128 4x4"; do
  set -- $spec
  run "$1" --onnx "$2" --batch "$3" --pod "$4" --chip v3 --model fast || status=1
done
# ResNet-50 against PyTorch: the exported input on a chip, the output checked by check_pytorch.py
if run resnet50_pytorch --onnx build/models/resnet50.onnx --input build/models/resnet50_input.npy \
     --out "$out/resnet50_out.npy" --chip v3 --model fast; then
  $py scripts/check_pytorch.py --model resnet50 --input build/models/resnet50_input.npy --output "$out/resnet50_out.npy" \
    | tee "$out/resnet50_pytorch.txt" >&2 || status=1
fi
# BERT-base: refused until the transformer ops are lowered (docs/models.md, "Status"); reported, not a failure
run bert_base_b8 --onnx build/models/bert_base.onnx --batch 8 --chip v3 --model fast ||
  { echo "bench_models: BERT-base not run: $(tail -2 "$out/bert_base_b8.log" | head -1)" >&2; rm -f "$out/bert_base_b8.json"; }

{
  printf '%-18s %6s %5s %12s %10s %12s %8s %8s %6s %9s %8s\n' run batch pod cycles latency_us img/s/chip util bound exact host_s peak_MB
  for f in "$out"/*.json; do
    [ -s "$f" ] || continue
    n=$(basename "$f" .json)
    read -r secs kb <"$out/$n.time"
    printf '%-18s %6s %5s %12s %10.1f %12.1f %7.1f%% %7.1f%% %6s %9s %8d\n' "$n" "$(field batch <"$f")" \
      "$(field chips <"$f")" "$(field cycles <"$f")" "$(field latency_us <"$f")" "$(field images_per_s_per_chip <"$f")" \
      "$($py -c "print(100*$(field utilization <"$f"))")" "$($py -c "print(100*$(field utilization_bound <"$f"))")" \
      "$(field bit_exact <"$f")" "$secs" "$((kb / 1024))"
  done
  echo "published (training, not inference): a v3 chip trains ResNet-50 at ~1,950 images/s at 256 a chip, 1,260 at 32 a chip on 1,024 chips; BERT-Large ~60 sequences/s a chip"
} | tee "$out/summary.txt"
[ -s "$out/resnet50_b32.json" ] && $py scripts/plot_layers.py "$out/resnet50_b32.json" "$out/resnet50_b32_layers.png" || true
exit $status
