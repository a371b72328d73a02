#!/usr/bin/python3
"""Exports the reference models (scripts/model_zoo.py) from PyTorch to ONNX (docs/models.md).

For each model NAME it writes, into DIR:
  NAME.onnx         torch.onnx.export of the module in eval mode (batch norm folded into Conv),
                    constant folding on, graph input "input" and output "output" with a
                    symbolic batch dimension "batch" (the reader's --batch fixes it);
  NAME_input.npy    the float32 input it was exported with (seeded: model_zoo.py);
  NAME_output.npy   PyTorch's float32 output for that input.
Every file is written under a temporary name and renamed when all three are complete (the
.onnx last, so it stands for the set); on failure nothing is left. It prints what it wrote
(sizes, the op histogram read back with onnx.load, the time) on stderr.

Besides the four models, "transformer_small_opset17" is transformer_small exported at opset 17
(LayerNorm as the LayerNormalization op, not the ReduceMean/Sub/Pow/Sqrt/Div pattern).

usage: scripts/export_models.py [--out DIR] [--only NAME,...] [--batch B] [--opset N] [--seed S]
  --out DIR      where to write (default build/models; made if missing)
  --only NAMES   comma-separated, of: resnet50 bert_base cnn_small transformer_small
                 transformer_small_opset17 (default: all)
  --batch B      the batch of the example input (default per model: resnet50 8, bert_base 8,
                 the small ones 2)
  --opset N      13..17 (default 13; the _opset17 variant is always 17)
  --seed S       the models' seed (default 0; check_pytorch.py --seed must match)
Exit status: 0 written; 1 the export failed; 2 bad usage.
Run with /usr/bin/python3 (Debian's python3-torch, python3-torchvision, python3-onnx).
"""
import argparse
import collections
import io
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402

OPSETS = range(13, 18)
# Extra exports: name -> (model, opset).
VARIANTS = {"transformer_small_opset17": ("transformer_small", 17)}
NAMES = list(model_zoo.MODELS) + list(VARIANTS)


def usage_error(msg):
    print(f"export_models: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="build/models")
    p.add_argument("--only", default=",".join(NAMES))
    p.add_argument("--batch", type=int)
    p.add_argument("--opset", type=int, default=13)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    names = [n for n in a.only.split(",") if n]
    bad = [n for n in names if n not in NAMES]
    if bad or not names:
        usage_error(f"--only: unknown model {', '.join(bad) or '(none given)'}; "
                    f"known: {', '.join(NAMES)}")
    if a.opset not in OPSETS:
        usage_error(f"--opset {a.opset}: must be 13..17")
    if a.batch is not None and not 1 <= a.batch <= 4096:
        usage_error(f"--batch {a.batch}: must be 1..4096")
    if not 0 <= a.seed < 2 ** 31:
        usage_error(f"--seed {a.seed}: must be 0..2^31-1")
    a.names = list(dict.fromkeys(names))
    return a


def op_histogram(onnx_bytes):
    import onnx
    g = onnx.load_from_string(onnx_bytes)
    onnx.checker.check_model(g)
    ops = collections.Counter(n.op_type for n in g.graph.node)
    weights = sum(int(np.prod(t.dims)) for t in g.graph.initializer)
    return g.opset_import[0].version, ops, weights


def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array, dtype=np.float32))
    return buf.getvalue()


def export_one(name, args):
    import torch
    model_name, opset = VARIANTS.get(name, (name, args.opset))
    t0 = time.monotonic()
    model, x = model_zoo.build(model_name, args.seed, args.batch)
    y = model_zoo.run(model, x)
    t_build = time.monotonic() - t0
    buf = io.BytesIO()
    with warnings.catch_warnings():
        # torch.onnx's advice on dynamic shapes and constant folding, not problems with these models
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, buf, opset_version=opset, input_names=["input"],
                          output_names=["output"], do_constant_folding=True,
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    onnx_bytes = buf.getvalue()
    got_opset, ops, weights = op_histogram(onnx_bytes)
    if got_opset != opset:
        raise RuntimeError(f"asked for opset {opset}, the file says {got_opset}")
    files = [(f"{name}_input.npy", npy_bytes(x.numpy())),
             (f"{name}_output.npy", npy_bytes(y.numpy())),
             (f"{name}.onnx", onnx_bytes)]
    write_atomically(args.out, files)
    dt = time.monotonic() - t0
    hist = " ".join(f"{op}:{n}" for op, n in sorted(ops.items()))
    print(f"export_models: {name}: opset {opset}, input {list(x.shape)}, output {list(y.shape)}, "
          f"{weights:,} weights, {len(onnx_bytes):,} bytes .onnx; {dt:.1f} s "
          f"({t_build:.1f} s building and running)\n  ops ({sum(ops.values())}): {hist}",
          file=sys.stderr)
    for fname, data in files:
        print(f"  wrote {os.path.join(args.out, fname)} ({len(data):,} bytes)", file=sys.stderr)


def write_atomically(out, files):
    temps = []
    try:
        for fname, data in files:
            tmp = os.path.join(out, f".{fname}.tmp{os.getpid()}")
            temps.append(tmp)
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        for (fname, _), tmp in zip(files, temps):
            os.replace(tmp, os.path.join(out, fname))
    except BaseException:
        for tmp in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise


def main(argv):
    args = parse_args(argv)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        usage_error(f"--out {args.out}: {e.strerror}")
    if not os.access(args.out, os.W_OK):
        usage_error(f"--out {args.out}: not writable")
    for name in args.names:
        try:
            export_one(name, args)
        except Exception as e:  # a failed export names the model; nothing of it is left
            print(f"export_models: {name}: export failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
