#!/usr/bin/python3
"""Checks a chip's output for a reference model against PyTorch (docs/models.md, "Checking
against PyTorch").

It rebuilds the original PyTorch module (scripts/model_zoo.py, the same seed as the export),
runs it in float32 on the input X, and compares Y, the chip's float32 output for X, with it:
  rel_l2    ||Y - ref|| / ||ref||  (over the whole tensor, in float64)
  cosine    <Y, ref> / (||Y|| ||ref||)
  max_abs   max |Y - ref|, checked as max_abs / max |ref| ("max_rel")
  top1      classifiers: the fraction of rows whose argmax agrees, a row whose reference
            logits are nearly tied between its argmax and Y's (a margin below TIE of the
            row's standard deviation) counted as agreeing ("near ties", reported)
each against the model's tolerance (tolerances() from MEASURED below: measurements of a bf16
emulation of the chip, see there).

usage:
  check_pytorch.py --model NAME --input X.npy --output Y.npy [--seed S] [--json]
      Exit 0: every metric within its tolerance; 1: one or more is not (each named, with its
      value and tolerance); 2: bad usage or input (a missing or unreadable file, not float32,
      the wrong shape, a non-finite input).
  check_pytorch.py --model NAME --input X.npy --emulate-bf16 OUT.npy [--seed S]
      Writes the bf16 emulation's output for X (a stand-in for the chip's output).
  check_pytorch.py --self-test [--model NAME,...] [--seed S] [--json]
      Plants errors in the module (a wrong conv stride, a wrong padding, a dropped bias, a
      transposed weight, a missing residual; for transformers a transposed weight, a dropped
      bias, a missing residual, a wrong head split, a missing attention scale), runs each
      under the bf16 emulation and checks that each FAILS against the unplanted float32
      output, while the unplanted emulation PASSES. Default models: the small ones.
      Exit 0: all as expected; 1: a planted error passed or the emulation failed.
  check_pytorch.py --measure [--model NAME,...] [--seeds 0,1,...] [--batches 2,64]
      The emulation against float32 over seeds and batches: the measurements MEASURED holds,
      the tolerances derived from them (docs/models.md).
NAME: resnet50 bert_base cnn_small transformer_small. Run with /usr/bin/python3.
"""
import argparse
import copy
import io
import json
import math
import os
import sys
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402

# The emulation: the chip multiplies bf16 inputs and weights with fp32 accumulation and stores
# every activation as bf16. Emulated in torch: batch norm folded into Conv (as the export
# does), then every float32 tensor going into and coming out of every aten op rounded to bf16
# (RNE: x.to(bfloat16).to(float32)); the op itself computes in fp32. This rounds more often
# than the chip (which keeps, e.g., a matmul's result in fp32 through its fused bias and GELU
# and computes LayerNorm and Softmax inside one kernel), so it errs on the large side.
#
# Tolerances, from `check_pytorch.py --measure` (docs/models.md has the tables): the worst
# emulation-vs-float32 figure over the seeds and batches measured, times MARGIN, for the
# error-like metrics rel_l2, 1 - cosine, max_rel, 1 - top1; the near-tie margin TIE likewise
# from the largest reference margin of a row the emulation flipped.
MARGIN = 3.0
# worst measured (check_pytorch.py --measure; seeds x batches in docs/models.md):
#            rel_l2, 1 - cosine, max_rel, 1 - top1 (flips not near ties), largest flipped margin
MEASURED = {
    "cnn_small": (0.0188, 1.45e-04, 0.0191, 0.0, 0.0155),     # seeds 0-9 x batch 1, 2, 8, 64
    "transformer_small": (0.00663, 2.20e-05, 0.0144, None, None),  # the same
    "resnet50": (0.0166, 1.37e-04, 0.0199, 0.0, 0.0149),     # seeds 0-2 x batch 8
    "bert_base": (0.0135, 9.10e-05, 0.0285, None, None),      # seeds 0-2 x batch 8
}


def tolerances(name):
    rel, cos, mx, top1, tie = MEASURED[name]
    t = {"rel_l2": MARGIN * rel, "cosine": 1.0 - MARGIN * cos, "max_rel": MARGIN * mx}
    if top1 is not None:
        t["top1"] = 1.0 - MARGIN * top1
        t["tie"] = MARGIN * tie
    return t


# The emulation with rounding off against float32 (batch norm folding's last bits; measured
# 1.6e-06 cnn_small, 0 transformer_small, 2.0e-05 resnet50).
HARNESS_TOL = 1e-4


class BadInput(Exception):
    pass


# ---------------------------------------------------------------- metrics

def metrics(y, ref, classifier, tie=0.0):
    """The figures of y against ref (numpy arrays of one shape), in float64."""
    y = np.asarray(y, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    m = {}
    nonfinite = int(np.size(y) - np.count_nonzero(np.isfinite(y)))
    if nonfinite:
        m["nonfinite"] = nonfinite
        y = np.where(np.isfinite(y), y, 0.0)
    d = y - ref
    rn, yn = np.linalg.norm(ref), np.linalg.norm(y)
    m["rel_l2"] = float(np.linalg.norm(d) / rn) if rn > 0 else float(np.linalg.norm(d) > 0) * math.inf
    m["cosine"] = float(np.dot(y.ravel(), ref.ravel()) / (yn * rn)) if yn > 0 and rn > 0 else 0.0
    m["max_abs"] = float(np.max(np.abs(d)))
    ref_max = float(np.max(np.abs(ref)))
    m["max_rel"] = m["max_abs"] / ref_max if ref_max > 0 else math.inf * (m["max_abs"] > 0)
    if classifier:
        pick, top = np.argmax(y, axis=1), np.argmax(ref, axis=1)
        rows = np.arange(ref.shape[0])
        std = np.std(ref, axis=1)
        margin = (ref[rows, top] - ref[rows, pick]) / np.where(std > 0, std, 1.0)
        flipped = pick != top
        ties = flipped & (margin < tie)
        m["top1"] = float(np.mean(~flipped | ties))
        m["top1_strict"] = float(np.mean(~flipped))
        m["near_ties"] = int(np.count_nonzero(ties))
        m["flip_margins"] = [float(v) for v in margin[flipped]]
    return m


def judge(m, tol):
    """The failures of metrics m against tolerances tol: a list of one-line reasons."""
    bad = []
    if m.get("nonfinite"):
        bad.append(f"{m['nonfinite']} non-finite values in the output")
    if not m["rel_l2"] <= tol["rel_l2"]:
        bad.append(f"rel_l2 {m['rel_l2']:.4g} > {tol['rel_l2']:.4g} ({m['rel_l2'] / tol['rel_l2']:.3g}x)")
    if not m["cosine"] >= tol["cosine"]:
        bad.append(f"cosine {m['cosine']:.6f} < {tol['cosine']:.6f} "
                   f"(1 - cosine {(1 - m['cosine']) / (1 - tol['cosine']):.3g}x its tolerance)")
    if not m["max_rel"] <= tol["max_rel"]:
        bad.append(f"max_abs / max|ref| {m['max_rel']:.4g} > {tol['max_rel']:.4g} "
                   f"({m['max_rel'] / tol['max_rel']:.3g}x; max_abs {m['max_abs']:.4g})")
    if "top1" in tol and not m["top1"] >= tol["top1"]:
        bad.append(f"top1 agreement {m['top1']:.4f} < {tol['top1']:.4f}")
    return bad


# ---------------------------------------------------------------- the emulation

def fold_bn(model):
    """Folds each BatchNorm2d into the Conv2d registered just before it (torchvision's ResNet,
    model_zoo's CNN), as the ONNX export does: the modules the chip's weights come from."""
    import torch.nn as nn
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    for mod in list(model.modules()):
        names = list(mod._modules)
        for a, b in zip(names, names[1:]):
            conv, bn = mod._modules[a], mod._modules[b]
            if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
                mod._modules[a] = fuse_conv_bn_eval(conv, bn)
                mod._modules[b] = nn.Identity()
    return model


def emulate_bf16(model, x, rounding=True):
    """The module's output for x with every op's inputs and outputs rounded to bf16
    (rounding False: the same machinery with no rounding, which must give float32's output)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    def rnd(t):
        if rounding and isinstance(t, torch.Tensor) and t.dtype == torch.float32:
            return t.to(torch.bfloat16).to(torch.float32)
        return t

    class Bf16(TorchDispatchMode):
        def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
            kwargs = kwargs or {}
            # An argument the op writes (relu_, add_, out=) must stay the tensor it is: it is
            # rounded in place before and after, every other one through a rounded copy.
            written = [a.name for a in func._schema.arguments
                       if a.alias_info is not None and a.alias_info.is_write]
            names = [a.name for a in func._schema.arguments]
            args = list(args)
            for i, v in enumerate(args):
                if names[i] in written and isinstance(v, torch.Tensor):
                    v.copy_(rnd(v))
                else:
                    args[i] = tree_map(rnd, v)
            kwargs = {k: (v.copy_(rnd(v)) if k in written else tree_map(rnd, v)) for k, v in kwargs.items()}
            out = func(*args, **kwargs)
            if written:
                for v in list(args) + list(kwargs.values()):
                    if isinstance(v, torch.Tensor) and v.dtype == torch.float32:
                        v.copy_(rnd(v))
                return out
            return tree_map(rnd, out)

    with Bf16():
        return model_zoo.run(model, x)


# ---------------------------------------------------------------- planted errors
# Each takes the batch-norm-folded copy of a module and edits it in place.

def _conv(model, path):
    return model.get_submodule(path)


def plant_stride(path):
    def plant(model):
        c = _conv(model, path)
        c.stride = tuple(1 if s == 2 else 2 for s in c.stride)
    return plant


def plant_pad_shift(path):
    """The padding applied at the wrong side: pads (begin + 1, end - 1) in both axes, a
    window shifted one pixel (the output shape is unchanged)."""
    def plant(model):
        import torch.nn.functional as F
        c = _conv(model, path)
        ph, pw = c.padding
        c.padding = (0, 0)
        c.register_forward_pre_hook(lambda mod, inp: (F.pad(inp[0], (pw + 1, pw - 1, ph + 1, ph - 1)),))
    return plant


def plant_zero_bias(path):
    def plant(model):
        b = model.get_submodule(path).bias
        b.data.zero_()
    return plant


def plant_transpose(path, dims):
    def plant(model):
        w = model.get_submodule(path).weight
        w.data = w.data.transpose(*dims).contiguous()
    return plant


def plant_no_residual(path):
    """The block's residual Add dropped: the block returns relu(F(x)), not relu(F(x) + x)."""
    def plant(model):
        import torch.nn.functional as F
        b = model.get_submodule(path)
        if hasattr(b, "conv3"):  # torchvision's Bottleneck (its bn's folded to Identity)
            def fwd(self, x):
                y = self.relu(self.bn1(self.conv1(x)))
                y = self.relu(self.bn2(self.conv2(y)))
                return self.relu(self.bn3(self.conv3(y)))
        else:                    # model_zoo's _Block
            def fwd(self, x):
                return F.relu(self.conv2(F.relu(self.conv1(x))))
        b.forward = types.MethodType(fwd, b)
    return plant


def plant_no_attn_residual(path):
    def plant(model):
        layer = model.get_submodule(path)

        def fwd(self, x, src_mask=None, src_key_padding_mask=None):
            x = self.norm1(self._sa_block(x, None, None))
            return self.norm2(x + self._ff_block(x))
        layer.forward = types.MethodType(fwd, layer)
    return plant


def plant_heads(path):
    """Attention split into half the heads (each twice as wide)."""
    def plant(model):
        mha = model.get_submodule(path)
        mha.num_heads //= 2
        mha.head_dim *= 2
    return plant


def plant_no_attn_scale(path):
    """Attention scores not divided by sqrt(head_dim): Q's projection scaled up by it."""
    def plant(model):
        mha = model.get_submodule(path)
        d = mha.embed_dim
        s = math.sqrt(mha.head_dim)
        mha.in_proj_weight.data[:d] *= s
        mha.in_proj_bias.data[:d] *= s
    return plant


def _transformer_plants():
    return [
        ("transposed weight", "layer 0's attention output projection (D x D) transposed",
         plant_transpose("layers.0.self_attn.out_proj", (0, 1))),
        ("dropped bias", "layer 0's first FFN bias dropped", plant_zero_bias("layers.0.linear1")),
        ("missing residual", "layer 0's attention residual Add dropped",
         plant_no_attn_residual("layers.0")),
        ("wrong head split", "layer 0's attention in half the heads", plant_heads("layers.0.self_attn")),
        ("missing attention scale", "layer 1's scores not divided by sqrt(head_dim)",
         plant_no_attn_scale("layers.1.self_attn")),
    ]


PLANTS = {
    "cnn_small": [
        ("wrong conv stride", "the 7x7 stem at stride 1, not 2", plant_stride("stem.0")),
        ("wrong padding", "block1.conv1's 3x3 padding (2, 0) not (1, 1)", plant_pad_shift("block1.conv1.0")),
        ("dropped bias", "block2.conv1's (folded) bias dropped", plant_zero_bias("block2.conv1.0")),
        ("transposed weight", "block1.conv1's weight with input and output channels swapped",
         plant_transpose("block1.conv1.0", (0, 1))),
        ("transposed kernel", "block1.conv2's 3x3 kernels transposed (kh <-> kw)",
         plant_transpose("block1.conv2.0", (2, 3))),
        ("missing residual", "block1's identity Add dropped", plant_no_residual("block1")),
    ],
    "resnet50": [
        ("wrong conv stride", "the 7x7 stem at stride 1, not 2", plant_stride("conv1")),
        ("wrong padding", "layer1.0.conv2's 3x3 padding (2, 0) not (1, 1)", plant_pad_shift("layer1.0.conv2")),
        ("dropped bias", "layer1.0.conv1's (folded) bias dropped", plant_zero_bias("layer1.0.conv1")),
        ("transposed weight", "layer1.0.conv2's weight with input and output channels swapped",
         plant_transpose("layer1.0.conv2", (0, 1))),
        ("transposed kernel", "layer2.0.conv2's 3x3 kernels transposed (kh <-> kw)",
         plant_transpose("layer2.0.conv2", (2, 3))),
        ("missing residual", "layer1.1's identity Add dropped", plant_no_residual("layer1.1")),
    ],
    "transformer_small": _transformer_plants(),
    "bert_base": _transformer_plants(),
}


# ---------------------------------------------------------------- input

def load_npy(path, what):
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
            if not magic:
                raise BadInput(f"{what} {path}: empty file")
            if magic[:2] == b"PK":
                raise BadInput(f"{what} {path}: a zip archive (.npz?), not a .npy array")
            if magic != b"\x93NUMPY":
                raise BadInput(f"{what} {path}: not a .npy file (no NUMPY magic)")
            f.seek(0)
            a = np.load(f, allow_pickle=False)
    except FileNotFoundError:
        raise BadInput(f"{what} {path}: no such file")
    except IsADirectoryError:
        raise BadInput(f"{what} {path}: a directory")
    except (OSError, ValueError, EOFError) as e:
        raise BadInput(f"{what} {path}: not a readable .npy file ({e})")
    if a.dtype != np.float32:
        raise BadInput(f"{what} {path}: dtype {a.dtype}, expected float32")
    return a


def check_shape(a, sample_shape, path, what):
    want = "[B, " + ", ".join(map(str, sample_shape)) + "]"
    if a.ndim != 1 + len(sample_shape) or tuple(a.shape[1:]) != tuple(sample_shape) or a.shape[0] < 1:
        raise BadInput(f"{what} {path}: shape {list(a.shape)}, expected {want}")


def load_input(name, path):
    x = load_npy(path, "--input")
    check_shape(x, model_zoo.MODELS[name][3], path, "--input")
    if not np.all(np.isfinite(x)):
        raise BadInput(f"--input {path}: {np.size(x) - np.count_nonzero(np.isfinite(x))} non-finite values")
    return x


def reference(name, seed, x):
    """(float32 reference output, the module) for input x (numpy)."""
    import torch
    model, _ = model_zoo.build(name, seed, x.shape[0])
    xt = torch.from_numpy(np.ascontiguousarray(x))
    return model_zoo.run(model, xt).numpy(), model


def emulated(model, x):
    import torch
    return emulate_bf16(fold_bn(copy.deepcopy(model)), torch.from_numpy(np.ascontiguousarray(x))).numpy()


# ---------------------------------------------------------------- modes

def fmt(m):
    s = f"rel_l2 {m['rel_l2']:.3e}  cosine {m['cosine']:.7f}  max_abs {m['max_abs']:.3e} (max_rel {m['max_rel']:.3e})"
    if "top1" in m:
        s += f"  top1 {m['top1']:.4f} (strict {m['top1_strict']:.4f}, {m['near_ties']} near ties)"
    return s


def fmt_tol(t):
    s = f"rel_l2 <= {t['rel_l2']:.3g}, cosine >= {t['cosine']:.7f}, max_rel <= {t['max_rel']:.3g}"
    if "top1" in t:
        s += f", top1 >= {t['top1']:.3g} (near tie: margin < {t['tie']:.3g} std)"
    return s


def finite_json(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite_json(x) for x in v]
    return v


def do_check(a):
    x = load_input(a.model, a.input)
    y = load_npy(a.output, "--output")
    classifier, out_shape = model_zoo.MODELS[a.model][2], model_zoo.MODELS[a.model][4]
    check_shape(y, out_shape, a.output, "--output")
    if y.shape[0] != x.shape[0]:
        raise BadInput(f"--output {a.output}: batch {y.shape[0]}, but --input {a.input} has {x.shape[0]}")
    ref, _ = reference(a.model, a.seed, x)
    tol = tolerances(a.model)
    m = metrics(y, ref, classifier, tol.get("tie", 0.0))
    bad = judge(m, tol)
    if a.json:
        print(json.dumps(finite_json({"model": a.model, "seed": a.seed, "batch": int(x.shape[0]),
                                      "pass": not bad, "metrics": m, "tolerances": tol, "failures": bad})))
    else:
        print(f"check_pytorch: {a.model} (seed {a.seed}, batch {x.shape[0]}): {fmt(m)}")
        print(f"  tolerances: {fmt_tol(tol)}")
        for b in bad:
            print(f"  FAIL: {b}")
        print(f"check_pytorch: {'ok' if not bad else 'FAIL'}: {a.model}")
    return 1 if bad else 0


def do_emulate(a):
    x = load_input(a.model, a.input)
    _, model = reference(a.model, a.seed, x)
    y = emulated(model, x)
    out = a.emulate_bf16
    d = os.path.dirname(out) or "."
    if not os.path.isdir(d):
        raise BadInput(f"--emulate-bf16 {out}: no directory {d}")
    tmp = os.path.join(d, f".{os.path.basename(out)}.tmp{os.getpid()}")
    try:
        buf = io.BytesIO()
        np.save(buf, y.astype(np.float32))
        with open(tmp, "wb") as f:
            f.write(buf.getvalue())
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    print(f"check_pytorch: wrote the bf16 emulation of {a.model} for {a.input}: {out} {list(y.shape)}",
          file=sys.stderr)
    return 0


def do_self_test(a):
    ok = True
    report = []
    for name in a.models:
        classifier = model_zoo.MODELS[name][2]
        tol = tolerances(name)
        model, xt = model_zoo.build(name, a.seed)
        x = xt.numpy()
        ref = model_zoo.run(model, xt).numpy()
        # The emulation's machinery with rounding off must be float32 (batch norm folding
        # moves the last bits only): an op it loses (an in-place Relu, say) would show here.
        harness = metrics(emulate_bf16(fold_bn(copy.deepcopy(model)), xt, rounding=False).numpy(),
                          ref, False)["rel_l2"]
        emu = emulated(model, x)
        m = metrics(emu, ref, classifier, tol.get("tie", 0.0))
        bad = judge(m, tol)
        if not harness <= HARNESS_TOL:
            bad.append(f"the emulation without rounding is {harness:.3g} from float32 (> {HARNESS_TOL})")
        ok &= not bad
        print(f"self-test {name} (seed {a.seed}, batch {x.shape[0]}): tolerances: {fmt_tol(tol)}")
        print(f"  the emulation with rounding off: rel_l2 {harness:.2e} from float32 (<= {HARNESS_TOL})")
        print(f"  {'PASS' if not bad else 'FAIL (expected a pass)'}  bf16 emulation: {fmt(m)}")
        report.append({"model": name, "plant": None, "expected": "pass", "pass": not bad, "metrics": m})
        for kind, what, plant in PLANTS[name]:
            planted = fold_bn(copy.deepcopy(model))
            plant(planted)
            y = emulate_bf16(planted, xt).numpy()
            if y.shape != ref.shape:
                raise RuntimeError(f"{name}: the planted {kind} changes the output shape")
            pm = metrics(y, ref, classifier, tol.get("tie", 0.0))
            pbad = judge(pm, tol)
            ok &= bool(pbad)
            caught = "; ".join(pbad) if pbad else "NOT CAUGHT"
            print(f"  {'FAIL (as planted)' if pbad else 'PASS (a planted error passed!)'}  {kind}: {what}: {caught}")
            report.append({"model": name, "plant": kind, "what": what, "expected": "fail",
                           "pass": not pbad, "metrics": pm, "failures": pbad})
    if a.json:
        print(json.dumps(finite_json({"self_test": report, "ok": ok})))
    print(f"check_pytorch: self-test {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


def do_measure(a):
    worst = {}
    for name in a.models:
        classifier = model_zoo.MODELS[name][2]
        w = worst.setdefault(name, [0.0, 0.0, 0.0, 0.0, 0.0])
        for seed in a.seeds:
            for batch in a.batches:
                model, xt = model_zoo.build(name, seed, batch)
                ref = model_zoo.run(model, xt).numpy()
                m = metrics(emulated(model, xt.numpy()), ref, classifier)
                print(f"measure {name} seed {seed} batch {batch}: {fmt(m)}"
                      + (f"  flip margins {[round(v, 4) for v in m['flip_margins']]}" if classifier else ""),
                      flush=True)
                w[0] = max(w[0], m["rel_l2"])
                w[1] = max(w[1], 1 - m["cosine"])
                w[2] = max(w[2], m["max_rel"])
                if classifier:
                    w[3] = max(w[3], 1 - m["top1_strict"])
                    w[4] = max([w[4]] + m["flip_margins"])
        print(f"measure {name}: worst rel_l2 {w[0]:.3e}, 1-cosine {w[1]:.3e}, max_rel {w[2]:.3e}"
              + (f", 1-top1 {w[3]:.4f}, flipped-row margin {w[4]:.4f}" if classifier else ""))
    return 0


def parse_list(s, what, conv=str):
    try:
        v = [conv(t) for t in s.split(",") if t]
    except ValueError:
        raise BadInput(f"{what} {s}: not a comma-separated list of numbers")
    if not v:
        raise BadInput(f"{what}: empty")
    return v


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model")
    p.add_argument("--input")
    p.add_argument("--output")
    p.add_argument("--emulate-bf16", metavar="OUT")
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--measure", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--batches", default="2,64")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    try:
        if not 0 <= a.seed < 2 ** 31:
            raise BadInput(f"--seed {a.seed}: must be 0..2^31-1")
        if a.self_test or a.measure:
            a.models = parse_list(a.model, "--model") if a.model else list(model_zoo.SMALL)
            bad = [n for n in a.models if n not in model_zoo.MODELS]
            if bad:
                raise BadInput(f"--model: unknown {', '.join(bad)}; known: {', '.join(model_zoo.MODELS)}")
            if a.self_test:
                return do_self_test(a)
            a.seeds = parse_list(a.seeds, "--seeds", int)
            a.batches = parse_list(a.batches, "--batches", int)
            return do_measure(a)
        if a.model not in model_zoo.MODELS:
            raise BadInput(f"--model {a.model}: must be one of {', '.join(model_zoo.MODELS)}")
        if not a.input:
            raise BadInput("--input X.npy is required")
        if (a.output is None) == (a.emulate_bf16 is None):
            raise BadInput("give one of --output Y.npy (check) and --emulate-bf16 OUT.npy")
        return do_emulate(a) if a.emulate_bf16 else do_check(a)
    except BadInput as e:
        print(f"check_pytorch: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
