#!/usr/bin/env bash
# Training scaling (make bench; docs/benchmarks.md, docs/training.md): weak scaling (a fixed
# batch, or model shard, per chip) and strong scaling (a fixed global batch and model) on
# 1x1, 2x2, 4x4 and 8x8 slices for data parallelism (DP), model parallelism (MP) and both
# (DP along X, MP along Y). One step each (its cycles do not change from step to step), on
# 4x4-MXU chips with synthetic data (64 features, 4 classes), checked bit-exact against the
# reference trainer like every run. Writes OUT/train_scaling.csv, .txt (the table README
# shows) and .png. usage: scripts/bench_train.sh OUTDIR
set -euo pipefail
out=$1
mkdir -p "$out"
tpusim=${TPUSIM:-build/tpusim}
csv=$out/train_scaling.csv
json_field() { sed -nE "s/.*\"$1\":([0-9.e+-]+).*/\1/p"; }

echo "== training scaling: weak and strong, DP, MP and DP x MP, 1x1 .. 8x8 slices (4x4 chips, one step each)" >&2
echo "mode,scaling,chips,dp,mp,hidden,batch,batch_per_chip,step_cycles,compute_cycles,comm_cycles,exposed_cycles,mxu_utilization,tflops" >"$csv"
for mode in dp mp dpmp; do
  for scaling in weak strong; do
    for n in 1 2 4 8; do
      chips=$((n * n))
      case $mode in
        dp) dp=$chips mp=1 ;;
        mp) dp=1 mp=$chips ;;
        dpmp) dp=$n mp=$n ;;
      esac
      # weak: a fixed batch per data-parallel rank and hidden units per model-parallel rank;
      # strong: a fixed global batch and hidden size
      case $mode-$scaling in
        dp-weak) hidden=64 batch=$((64 * dp)) ;;
        dp-strong) hidden=64 batch=256 ;;
        mp-weak) hidden=$((8 * mp)) batch=32 ;;
        mp-strong) hidden=256 batch=32 ;;
        dpmp-weak) hidden=$((8 * mp)) batch=$((32 * dp)) ;;
        dpmp-strong) hidden=128 batch=256 ;;
      esac
      if ! j=$("$tpusim" train --pod "${n}x${n}" --mxu 4x4 --dp "$dp" --mp "$mp" --data synthetic --examples 8192 \
            --features 64 --classes 4 --hidden "$hidden" --batch "$batch" --steps 1 --lr 0.05 --json 2>"$out/train_err.txt"); then
        echo "bench_train: $mode $scaling ${n}x${n} failed:" >&2
        cat "$out/train_err.txt" >&2
        exit 1
      fi
      echo "$mode,$scaling,$chips,$dp,$mp,$hidden,$batch,$((batch / dp)),$(json_field step_cycles <<<"$j"),$(json_field compute_cycles <<<"$j"),$(json_field comm_cycles <<<"$j"),$(json_field exposed_comm_cycles <<<"$j"),$(json_field mxu_utilization <<<"$j"),$(json_field tflops <<<"$j")" >>"$csv"
      echo "  $mode $scaling ${n}x${n}: $(json_field step_cycles <<<"$j") cycles" >&2
    done
  done
done
/usr/bin/python3 - "$csv" "$out/train_scaling.txt" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = {(r["mode"], r["scaling"]): int(r["step_cycles"]) for r in rows if r["chips"] == "1"}
base_tflops = {(r["mode"], r["scaling"]): float(r["tflops"]) for r in rows if r["chips"] == "1"}
with open(sys.argv[2], "w") as f:
    f.write("| layout | scaling | slice | dp x mp | hidden | batch (a chip) | step cycles | 1x1 / step | exposed comm | speed-up | efficiency |\n")
    f.write("|---|---|---|---|---|---|---:|---:|---:|---:|---:|\n")
    for r in rows:
        chips, cyc = int(r["chips"]), int(r["step_cycles"])
        b = base[(r["mode"], r["scaling"])]
        n = int(chips ** 0.5)
        # speed-up: the model's FLOP rate against one chip's (strong: base / cycles; weak DP:
        # chips x base / cycles); efficiency: speed-up per chip
        speed = float(r["tflops"]) / base_tflops[(r["mode"], r["scaling"])]
        eff = speed / chips
        name = {"dp": "DP", "mp": "MP", "dpmp": "DP x MP"}[r["mode"]]
        f.write(f"| {name} | {r['scaling']} | {n}x{n} | {r['dp']} x {r['mp']} | {r['hidden']} | {r['batch']} ({r['batch_per_chip']}) "
                f"| {cyc:,} | {f'{100 * b / cyc:.1f}%' if r['scaling'] == 'weak' else '-'} | {100 * int(r['exposed_cycles']) / cyc:.1f}% "
                f"| {speed:.2f} | {100 * eff:.1f}% |\n")
PY
/usr/bin/python3 scripts/plot_scaling.py "$csv" "$out/train_scaling.png"
cat "$out/train_scaling.txt"
