#!/usr/bin/python3
"""Plants one error in an exported model (docs/models.md, "Checking against PyTorch"): the kind
of mistake a model compiler makes, written into the ONNX graph so that the whole path (reader,
compiler, chips, golden model) runs it faithfully and only the comparison with the original
PyTorch module can tell. Every planting keeps the model's output shape.

usage: plant_onnx.py KIND IN.onnx OUT.onnx
  stride    the first strided Conv runs at stride 1 (downstream shapes follow; value_info dropped)
  padding   the first 3x3 Conv with padding 1 pads 2 above and left, 0 below and right
  bias      the first Conv with a bias loses it
  transpose the first 3x3 Conv's weight has its kernel rows and columns swapped
  residual  the first Add of two activations is replaced by its first operand (the skip dropped)
Exits 2 when the model has nothing to plant the error in."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def attr(node, name):
    for a in node.attribute:
        if a.name == name:
            return a
    return None


def convs(g):
    return [n for n in g.node if n.op_type == "Conv"]


def init(g, name):
    for t in g.initializer:
        if t.name == name:
            return t
    return None


def plant(kind, m):
    g = m.graph
    del g.value_info[:]  # let the reader infer the shapes the planting changes
    if kind == "stride":
        for n in convs(g):
            a = attr(n, "strides")
            if a is not None and max(a.ints) > 1:
                a.ints[:] = [1] * len(a.ints)
                return True
    elif kind == "padding":
        for n in convs(g):
            w = init(g, n.input[1])
            a = attr(n, "pads")
            if w is not None and list(w.dims[2:]) == [3, 3] and a is not None and list(a.ints) == [1, 1, 1, 1]:
                a.ints[:] = [2, 2, 0, 0]
                return True
    elif kind == "bias":
        for n in convs(g):
            if len(n.input) == 3 and n.input[2]:
                del n.input[2]
                return True
    elif kind == "transpose":
        for n in convs(g):
            w = init(g, n.input[1])
            if w is not None and list(w.dims[2:]) == [3, 3]:
                v = numpy_helper.to_array(w).transpose(0, 1, 3, 2).copy()
                w.CopyFrom(numpy_helper.from_array(v, w.name))
                return True
    elif kind == "residual":
        consts = {t.name for t in g.initializer}
        for i, n in enumerate(g.node):
            if n.op_type == "Add" and not any(x in consts for x in n.input):
                keep, out = n.input[0], n.output[0]
                del g.node[i]
                for other in g.node:
                    for k, x in enumerate(other.input):
                        if x == out:
                            other.input[k] = keep
                for o in g.output:
                    if o.name == out:
                        o.name = keep
                return True
    else:
        sys.exit("plant_onnx: unknown kind '%s'\n%s" % (kind, __doc__))
    return False


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    kind, src, dst = argv[1:]
    m = onnx.load(src)
    if not plant(kind, m):
        print("plant_onnx: %s has nothing to plant '%s' in" % (src, kind), file=sys.stderr)
        sys.exit(2)
    onnx.save(m, dst)


if __name__ == "__main__":
    main(sys.argv)
