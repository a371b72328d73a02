#!/usr/bin/python3
"""Checks `tpusim train` against an independent numpy trainer.

It reads what `tpusim train --export DIR --loss-csv FILE` wrote and trains the same MLP
(F -> H -> H -> K, ReLU after each hidden layer, softmax cross-entropy averaged over the
batch, plain SGD w -= lr * grad on weights and biases) from the exported initial
parameters, on the same batches (step s takes rows [(s mod (N // B)) * B, ... + B) of
x_train), for the same number of steps, in float64 and in float32, plain numpy (no bf16
emulation). It then compares the chips' results with the float64 run:

  (a) the final parameters, per tensor: ||P_chip - P_np64|| / ||P_np64|| (Frobenius);
  (b) the loss curve: max over the steps of |loss_chip - loss_np64|, and the same for
      the final step's loss (the loss of a step is its batch's, before its update).

The chips round the matmul operands (weights, activations, gradients dZ) to bf16, so they
drift from float64 by much more than float32 does, but boundedly while SGD is stable; a
wrong gradient, a missing bias term, a wrong learning rate or batch order drift further.
The tolerances below say how far is too far. Beside the chip's figures it prints, as scale
references, the same figures for the float32 run ("np32") and for a float64 run started
from the initial parameters perturbed by a bf16-sized relative 2^-9 ("np64~"): when
rounding alone moves float64 beyond a tolerance, the run is too chaotic (lr too large)
for the comparison to mean anything, and the check fails as inconclusive.

usage: scripts/train_numpy.py EXPORT_DIR LOSS_CSV --batch B --lr LR [--steps S]
  --steps S   the number of steps of the run (default: the CSV's row count; when given
              it must agree with the CSV)
Exit status: 0 every figure is within its tolerance; 1 one or more is not (each named), or
the run is too sensitive to rounding to be checked; 2 bad usage, a missing or malformed
input file.
"""
import argparse
import math
import os
import sys

import numpy as np

# Tolerances, chosen from measurement. Sweep: digits (64-64-64-10, batch 64) on a 1x1 pod
# of 16x16 chips at lr 0.05, 0.1, 0.2, 0.3, 0.5 and synthetic data (16-16-16-4, batch 32)
# on 4x4 chips at lr 0.05 .. 0.25, each for 20, 60 and 200 steps. Where SGD is stable
# (digits lr <= 0.2, synthetic lr <= 0.15) the chips' worst drift from float64 was
# 0.011 (weights), 0.044 (biases: small norms), 0.020 (loss, max over the steps) and
# 0.008 (final loss); each tolerance is about 2.5-3x that. With them, tests/train_numpy_test.sh's
# run (digits, lr 0.1, 60 steps; chip: 0.0026, 0.016, 0.0031, 0.0007) fails when the numpy
# copy has lr off by 10% (loss max diff ~0.1), dW2 transposed, any one bias gradient
# missing or b3's halved (bias rel err >= 0.25), the batches one step out of order (loss
# 0.18); it does not notice lr off by 5% or every batch shifted by one row.
# Above those lr the float64 trajectory itself is chaotic: started from initial parameters
# perturbed by a relative 2^-9 (the size of a bf16 rounding) it drifts as far as the chips
# do (digits lr 0.5: loss differences ~0.8), so no tolerance could tell rounding from a
# bug; the "np64~" column below measures that, and the check fails as inconclusive when
# it, or the float32 run (worst seen in the stable runs: 2e-5; a ReLU that flips on a
# rounding can move it to ~1e-3), is beyond a tolerance.
TOL_W_REL = 0.03           # (a) ||W_chip - W_np64|| / ||W_np64||, w1, w2, w3
TOL_B_REL = 0.12           # (a) the same for b1, b2, b3
TOL_LOSS_MAX = 0.05        # (b) max over the steps of |loss_chip - loss_np64|
TOL_LOSS_FINAL = 0.025     # (b) |loss_chip - loss_np64| at the last step
# The sensitivity probe: float64 from the initial parameters times (1 + PERTURB * N(0, 1)).
PERTURB = 2.0 ** -9
PERTURB_SEED = 7

NAMES = ["w1", "b1", "w2", "b2", "w3", "b3"]


class UsageError(Exception):
    pass


def load_npy(d, name):
    path = os.path.join(d, name + ".npy")
    if not os.path.isfile(path):
        raise UsageError("missing %s" % path)
    try:
        a = np.load(path, allow_pickle=False)
    except Exception as e:  # a truncated or foreign file
        raise UsageError("cannot read %s: %s" % (path, e))
    if a.ndim != 2:
        raise UsageError("%s is %d-D, expected 2-D" % (path, a.ndim))
    return a


def load_export(d):
    if not os.path.isdir(d):
        raise UsageError("%s is not a directory" % d)
    x = load_npy(d, "x_train")
    y = load_npy(d, "y_train")
    init = {n: load_npy(d, n + "_init") for n in NAMES}
    final = {n: load_npy(d, n + "_final") for n in NAMES}
    N, F = x.shape
    H = init["w1"].shape[1]
    K = init["w3"].shape[1]
    want = {"w1": (F, H), "b1": (1, H), "w2": (H, H), "b2": (1, H), "w3": (H, K), "b3": (1, K)}
    for n in NAMES:
        for kind, p in (("init", init), ("final", final)):
            if p[n].shape != want[n]:
                raise UsageError("%s_%s.npy is %s, expected %s" % (n, kind, p[n].shape, want[n]))
    if y.shape != (N, 1):
        raise UsageError("y_train.npy is %s, expected (%d, 1)" % (y.shape, N))
    labels = y[:, 0]
    if not np.all(np.isfinite(labels)) or np.any(labels != np.round(labels)) or labels.min() < 0 or labels.max() >= K:
        raise UsageError("y_train.npy holds labels outside 0..%d" % (K - 1))
    if not all(np.all(np.isfinite(p[n])) for p in (init, final) for n in NAMES) or not np.all(np.isfinite(x)):
        raise UsageError("the export holds non-finite values")
    return x, labels.astype(np.int64), init, final


def load_csv(path):
    if not os.path.isfile(path):
        raise UsageError("missing %s" % path)
    with open(path) as f:
        lines = [l.strip() for l in f if l.strip()]
    if not lines or lines[0].split(",")[:2] != ["step", "loss"]:
        raise UsageError("%s: expected a header 'step,loss,...'" % path)
    loss = []
    for i, l in enumerate(lines[1:], 1):
        fields = l.split(",")
        try:
            step, value = int(fields[0]), float(fields[1])
        except (ValueError, IndexError):
            raise UsageError("%s line %d: bad row '%s'" % (path, i + 1, l))
        if step != i:
            raise UsageError("%s line %d: step %d, expected %d" % (path, i + 1, step, i))
        loss.append(value)
    if not loss:
        raise UsageError("%s has no steps" % path)
    return np.array(loss, dtype=np.float64)


def relu(z):
    return np.maximum(z, 0)


def step_grads(p, x, y, B):
    """One step's loss and gradients (mean cross-entropy over the B examples)."""
    z1 = x @ p["w1"] + p["b1"]
    a1 = relu(z1)
    z2 = a1 @ p["w2"] + p["b2"]
    a2 = relu(z2)
    z3 = a2 @ p["w3"] + p["b3"]
    zs = z3 - z3.max(axis=1, keepdims=True)
    e = np.exp(zs)
    s = e.sum(axis=1, keepdims=True)
    prob = e / s
    rows = np.arange(B)
    loss = float(np.mean(np.log(s[:, 0]) - zs[rows, y]))
    dz3 = prob
    dz3[rows, y] -= 1
    dz3 /= B
    g = {"w3": a2.T @ dz3, "b3": dz3.sum(axis=0, keepdims=True)}
    dz2 = (dz3 @ p["w3"].T) * (z2 > 0)
    g["w2"], g["b2"] = a1.T @ dz2, dz2.sum(axis=0, keepdims=True)
    dz1 = (dz2 @ p["w2"].T) * (z1 > 0)
    g["w1"], g["b1"] = x.T @ dz1, dz1.sum(axis=0, keepdims=True)
    return loss, g


def train(x, labels, init, B, lr, steps, dtype):
    """SGD in `dtype`; returns the per-step losses and the final parameters."""
    p = {n: init[n].astype(dtype) for n in NAMES}
    xs = x.astype(dtype)
    lr = dtype(lr)
    per_epoch = x.shape[0] // B
    losses = np.empty(steps)
    for s in range(steps):
        r0 = (s % per_epoch) * B
        losses[s], g = step_grads(p, xs[r0:r0 + B], labels[r0:r0 + B], B)
        for n in NAMES:
            p[n] -= lr * g[n].astype(dtype)
    return losses, p


def rel_err(a, ref):
    a, ref = np.asarray(a, np.float64), np.asarray(ref, np.float64)
    norm = np.linalg.norm(ref)
    d = np.linalg.norm(a - ref)
    if norm > 0:
        return d / norm
    return 0.0 if d == 0 else math.inf  # e.g. a bias that never moved from its zero init


def figures(params, losses, ref_params, ref_losses):
    w = {n: rel_err(params[n], ref_params[n]) for n in NAMES}
    dl = np.abs(np.asarray(losses, np.float64) - ref_losses)
    return w, float(dl.max()), float(dl[-1]), int(dl.argmax()) + 1


def main(argv):
    ap = argparse.ArgumentParser(prog="train_numpy.py", description=__doc__.split("\n")[0])
    ap.add_argument("export_dir")
    ap.add_argument("loss_csv")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--steps", type=int)
    a = ap.parse_args(argv)  # exits 2 on bad usage
    try:
        if a.batch <= 0:
            raise UsageError("--batch must be positive")
        if not (a.lr > 0 and math.isfinite(a.lr)):
            raise UsageError("--lr must be a positive number")
        x, labels, init, final = load_export(a.export_dir)
        chip_loss = load_csv(a.loss_csv)
        steps = len(chip_loss) if a.steps is None else a.steps
        if steps != len(chip_loss):
            raise UsageError("--steps %d but %s has %d steps" % (steps, a.loss_csv, len(chip_loss)))
        if a.batch > x.shape[0]:
            raise UsageError("--batch %d is more than the %d examples" % (a.batch, x.shape[0]))
    except UsageError as e:
        print("train_numpy: %s" % e, file=sys.stderr)
        return 2

    N, F = x.shape
    H, K = init["w1"].shape[1], init["w3"].shape[1]
    rng = np.random.default_rng(PERTURB_SEED)
    nudged = {n: init[n] * (1 + PERTURB * rng.standard_normal(init[n].shape)) for n in NAMES}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        l64, p64 = train(x, labels, init, a.batch, a.lr, steps, np.float64)
        l32, p32 = train(x, labels, init, a.batch, a.lr, steps, np.float32)
        lnu, pnu = train(x, labels, nudged, a.batch, a.lr, steps, np.float64)
    chip = figures(final, chip_loss, p64, l64)
    np32 = figures(p32, l32, p64, l64)
    sens = figures(pnu, lnu, p64, l64)

    print("train_numpy: %d-%d-%d-%d, %d examples, batch %d, lr %g, %d steps" % (F, H, H, K, N, a.batch, a.lr, steps))
    print("  loss: chip %.6f -> %.6f, np64 %.6f -> %.6f, np32 -> %.6f" %
          (chip_loss[0], chip_loss[-1], l64[0], l64[-1], l32[-1]))
    print("  %-18s %10s %10s %10s %10s" % ("vs np64", "chip", "np32", "np64~", "tolerance"))
    rows = [("rel err " + n, n, TOL_W_REL if n[0] == "w" else TOL_B_REL) for n in NAMES]
    rows += [("loss max |diff|", 1, TOL_LOSS_MAX), ("final loss |diff|", 2, TOL_LOSS_FINAL)]
    bad, touchy = [], []
    for label, key, tol in rows:
        c, r, e = [f[0][key] if isinstance(key, str) else f[key] for f in (chip, np32, sens)]
        flag = ""
        if not c <= tol:  # NaN fails too
            bad.append("chip %s %.3g > %.3g" % (label, c, tol))
            flag += "  <- chip"
        if not r <= tol:
            touchy.append("np32 %s %.3g > %.3g" % (label, r, tol))
            flag += "  <- np32"
        if not e <= tol:
            touchy.append("np64~ %s %.3g > %.3g" % (label, e, tol))
            flag += "  <- np64~"
        print("  %-18s %10.2e %10.2e %10.2e %10.1e%s" % (label, c, r, e, tol, flag))
    print("  np32: float32 numpy; np64~: float64 from the initial parameters perturbed by a relative "
          "%.2g (bf16-sized)" % PERTURB)
    if touchy:
        print("train_numpy: FAIL: inconclusive: the run is too sensitive to rounding for these tolerances "
              "(rounding alone moves float64 as far: %s); use a smaller --lr or fewer steps" %
              "; ".join(touchy))
    for b in bad:
        print("train_numpy: FAIL: %s" % b)
    if bad or touchy:
        return 1
    print("train_numpy: ok: max rel err weights %.2g biases %.2g, loss diff max %.2g final %.2g" %
          (max(chip[0][n] for n in NAMES if n[0] == "w"), max(chip[0][n] for n in NAMES if n[0] == "b"),
           chip[1], chip[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
