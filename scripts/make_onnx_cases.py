#!/usr/bin/env python3
"""Writes the ONNX reader's test models (tests/test_onnx.c) into DIR: one bad_*.onnx file per
class of bad input (each must be refused with the message fragment the test names), edge-case
models the reader must accept (ok_*.onnx, built with onnx.helper), and small models exported
by torch (torch_*.onnx), so that the reader's tests see what the real exporter writes whatever
else has been built. Fixed seeds; nothing is downloaded.

usage: /usr/bin/python3 scripts/make_onnx_cases.py DIR
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
RNG = np.random.default_rng(28)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def weights(name, shape):
    return const(name, RNG.standard_normal(shape).astype(np.float32))


def model(nodes, inputs, outputs, inits=(), opset=13, value_info=(), ir=8):
    g = helper.make_graph(nodes, "case", inputs, outputs, initializer=list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_onnx_cases")
    m.ir_version = ir
    return m


def vinfo(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def conv_model(x_shape=(1, 3, 8, 8), w_shape=(4, 3, 3, 3), opset=13, **attrs):
    """x -> Conv(W, B) -> Relu -> y: the base the Conv cases mutate."""
    attrs.setdefault("pads", [1, 1, 1, 1])
    conv = helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv1", **attrs)
    relu = helper.make_node("Relu", ["c"], ["y"], name="relu1")
    return model([conv, relu], [vinfo("x", list(x_shape))], [vinfo("y", None)],
                 [weights("W", w_shape), weights("B", (w_shape[0],))], opset=opset)


def unary_model(op, x_shape, opset=13, name="n1", **attrs):
    return model([helper.make_node(op, ["x"], ["y"], name=name, **attrs)], [vinfo("x", list(x_shape))],
                 [vinfo("y", None)], opset=opset)


def bad_cases():
    """{file name: model or bytes}: each refused (the fragments are in tests/test_onnx.c)."""
    c = {}
    good = conv_model().SerializeToString()
    c["bad_empty"] = b""
    c["bad_truncated"] = good[: len(good) // 2]
    c["bad_corrupt"] = b"\xff" * 16 + good[16:]
    c["bad_text"] = b"this is a text file, not a model\n"
    c["bad_opset12"] = conv_model(opset=12)
    c["bad_opset18"] = conv_model(opset=18)
    m = conv_model()
    m.graph.node[1].domain = "com.microsoft"
    c["bad_domain"] = m
    lstm = helper.make_node("LSTM", ["x", "W", "R"], ["y"], name="lstm1", hidden_size=4)
    c["bad_lstm"] = model([lstm], [vinfo("x", [5, 1, 3])], [vinfo("y", None)],
                          [weights("W", (1, 16, 3)), weights("R", (1, 16, 4))])
    c["bad_dilations"] = conv_model(dilations=[2, 2])
    c["bad_group"] = conv_model(x_shape=(1, 4, 8, 8), w_shape=(4, 2, 3, 3), group=2)
    m = conv_model()
    del m.graph.node[0].attribute[:]
    m.graph.node[0].attribute.append(helper.make_attribute("auto_pad", "SAME_UPPER"))
    c["bad_auto_pad"] = m
    c["bad_conv3d"] = conv_model(x_shape=(1, 3, 8, 8, 8), w_shape=(4, 3, 3, 3, 3), pads=[1] * 6)
    c["bad_ceil_mode"] = unary_model("MaxPool", (1, 3, 8, 8), name="pool1", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    c["bad_dynamic_dim"] = unary_model("Relu", ("batch", "seq", 8))
    c["bad_zero_dim"] = unary_model("Relu", (1, 0, 8))
    c["bad_negative_dim"] = unary_model("Relu", (1, -3, 8))
    c["bad_overflow"] = unary_model("Relu", (1 << 20, 1 << 20, 1 << 20))
    m = conv_model()
    m.graph.initializer[1].dims[0] = -4
    c["bad_negative_init"] = m
    two = helper.make_node("Add", ["x", "x2"], ["y"], name="add1")
    c["bad_two_inputs"] = model([two], [vinfo("x", [2, 3]), vinfo("x2", [2, 3])], [vinfo("y", None)])
    r1 = helper.make_node("Relu", ["x"], ["y"], name="r1")
    r2 = helper.make_node("Relu", ["x"], ["z"], name="r2")
    c["bad_two_outputs"] = model([r1, r2], [vinfo("x", [2, 3])], [vinfo("y", None), vinfo("z", None)])
    c["bad_softmax_axis"] = unary_model("Softmax", (2, 4, 8), name="sm1", axis=1)
    ln = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln1", axis=1)
    c["bad_layernorm_axis"] = model([ln], [vinfo("x", [2, 4, 8])], [vinfo("y", None)],
                                    [weights("s", (4, 8)), weights("b", (4, 8))], opset=17)
    ln13 = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln1")
    c["bad_layernorm_opset13"] = model([ln13], [vinfo("x", [2, 8])], [vinfo("y", None)],
                                       [weights("s", (8,)), weights("b", (8,))], opset=13)
    relu = helper.make_node("Relu", ["x"], ["r"], name="r1")
    gemm = helper.make_node("Gemm", ["x", "r"], ["y"], name="gemm1", transB=1)
    c["bad_gemm_b"] = model([relu, gemm], [vinfo("x", [4, 4])], [vinfo("y", None)])
    m = conv_model()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.append(onnx.StringStringEntryProto(key="location", value="weights.bin"))
    c["bad_external"] = m
    relu = helper.make_node("Relu", ["x"], ["s"], name="r1")
    rs = helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape1")
    c["bad_dynamic_reshape"] = model([relu, rs], [vinfo("x", [2])], [vinfo("y", None)])
    c["bad_unknown_attr"] = unary_model("Relu", (2, 3), name="relu1", alpha=0.5)
    m = conv_model()
    m.graph.initializer[1].CopyFrom(const("B", np.arange(4, dtype=np.int32)))
    c["bad_int32_init"] = m
    m = conv_model()
    m.graph.initializer[1].raw_data = m.graph.initializer[1].raw_data[:-4]
    c["bad_init_length"] = m
    c["bad_undefined_input"] = model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add1")],
                                     [vinfo("x", [2, 3])], [vinfo("y", None)])
    c["bad_constant_output"] = model([helper.make_node("Relu", ["x"], ["r"], name="r1"),
                                      helper.make_node("Identity", ["k"], ["y"], name="id1")],
                                     [vinfo("x", [2, 3])], [vinfo("y", None)], [weights("k", (2, 3))])
    drop = helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop1")
    c["bad_dropout_training"] = model([drop], [vinfo("x", [2, 3])], [vinfo("y", None)],
                                      [const("ratio", np.float32(0.5)), const("train", np.int64(1))])
    c["bad_slice_axis0"] = model([helper.make_node("Relu", ["x"], ["r"], name="r1"),
                                  helper.make_node("Slice", ["r", "st", "en", "ax"], ["y"], name="slice1")],
                                 [vinfo("x", [4, 6])], [vinfo("y", None)],
                                 [const("st", [1]), const("en", [3]), const("ax", [0])])
    c["bad_gather_act"] = model([helper.make_node("Gather", ["x", "idx"], ["y"], name="gather1")],
                                [vinfo("x", [4, 6])], [vinfo("y", None)], [const("idx", [0, 2])])
    c["bad_fixed_batch"] = unary_model("Relu", (2, 3))  # loaded with batch 8
    c["bad_declared_shape"] = model([helper.make_node("Relu", ["x"], ["r"], name="r1"),
                                     helper.make_node("Relu", ["r"], ["y"], name="r2")],
                                    [vinfo("x", [2, 3])], [vinfo("y", [2, 3])], value_info=[vinfo("r", [3, 2])])
    c["bad_kernel_too_big"] = conv_model(x_shape=(1, 3, 2, 2), w_shape=(4, 3, 5, 5), pads=[0, 0, 0, 0])
    c["bad_gemm_k"] = model([helper.make_node("Gemm", ["x", "W"], ["y"], name="gemm1")],
                            [vinfo("x", [2, 5])], [vinfo("y", None)], [weights("W", (4, 3))])
    c["bad_pool_pads"] = unary_model("MaxPool", (1, 3, 8, 8), name="pool1", kernel_shape=[2, 2], pads=[2, 2, 2, 2])
    c["bad_concat_act"] = model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat1", axis=0)],
                                [vinfo("x", [2, 3])], [vinfo("y", None)])
    c["bad_pow_tensor"] = model([helper.make_node("Pow", ["x", "e"], ["y"], name="pow1")],
                                [vinfo("x", [2, 3])], [vinfo("y", None)], [weights("e", (2, 3))])
    c["bad_int_input"] = model([helper.make_node("Relu", ["x"], ["y"], name="r1")],
                               [vinfo("x", [2, 3], TensorProto.INT32)], [vinfo("y", None)])
    c["bad_div_zero"] = model([helper.make_node("Div", ["a", "z"], ["s"], name="div1"),
                               helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape1")],
                              [vinfo("x", [6])], [vinfo("y", None)], [const("a", [6]), const("z", [0])])
    c["bad_reshape_count"] = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape1")],
                                   [vinfo("x", [6])], [vinfo("y", None)], [const("s", [4, 2])])
    c["bad_no_graph"] = b"\x08\x08"  # ir_version 8 and nothing else: valid protobuf
    return c


def ok_folding():
    """Every folded op torch emits, plus the ones ONNX allows around them: the output is
    Reshape(x, target) with target computed by shape arithmetic, then Unsqueeze/Squeeze of the
    activation, Gather of a float constant, Mul by a folded constant."""
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["shp"], name="shape"),                      # [2, 3, 4]
        n("Constant", [], ["i1"], name="c1", value=const("v", np.int64(1))),
        n("Gather", ["shp", "i1"], ["d1"], name="g1", axis=0),        # 3 (scalar)
        n("Constant", [], ["i2"], name="c2", value_ints=[2]),
        n("Gather", ["shp", "i2"], ["d2"], name="g2", axis=0),        # [4]
        n("Unsqueeze", ["d1", "ax0"], ["d1u"], name="u1"),            # [3]
        n("Mul", ["d1u", "d2"], ["prod"], name="m1"),                 # [12]
        n("Cast", ["prod"], ["prodf"], name="cast1", to=F),           # 12.0
        n("Cast", ["prodf"], ["prodi"], name="cast2", to=I64),        # 12
        n("Slice", ["shp", "st", "en"], ["b"], name="s1"),            # [2]
        n("Concat", ["b", "prodi"], ["target"], name="cat", axis=0),  # [2, 12]
        n("Reshape", ["x", "target"], ["r"], name="reshape"),         # [2, 12]
        n("Unsqueeze", ["r", "ax0"], ["ru"], name="u2"),              # [1, 2, 12]
        n("Squeeze", ["ru", "ax0"], ["rs"], name="sq"),               # [2, 12]
        n("Gather", ["table", "i1"], ["row"], name="g3", axis=0),     # [12]
        n("Slice", ["row", "st_r", "en_r", "ax0", "step_r"], ["rev"], name="s2"),  # reversed [12]
        n("Sqrt", ["rev"], ["rt"], name="sqrt1"),
        n("Add", ["rt", "half"], ["scale"], name="a1"),
        n("Identity", ["scale"], ["scale2"], name="id1"),
        n("Dropout", ["rs"], ["rd"], name="drop1"),
        n("Mul", ["rd", "scale2"], ["y"], name="mul_out"),
        n("Relu", ["x"], ["unused"], name="dead"),                     # unused: dropped
    ]
    table = np.arange(1, 37, dtype=np.float32).reshape(3, 12)  # known values: the test checks the folding
    inits = [const("ax0", [0]), const("st", [0]), const("en", [1]), const("table", table),
             const("st_r", [-1]), const("en_r", [-13]), const("step_r", [-1]), const("half", np.float32(0.5))]
    return model(nodes, [vinfo("x", ["batch", 3, 4])], [vinfo("y", ["batch", 12])], inits,
                 value_info=[vinfo("r", ["batch", 12])])


def ok_ops():
    """The compute ops with their attributes: pools, Transpose, MatMul broadcasting, Gemm
    transposed, Flatten, ReduceMean, Softmax, Tanh, Sub, Div."""
    n = helper.make_node
    nodes = [
        n("AveragePool", ["x"], ["ap"], name="avg", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
          count_include_pad=1),                                        # [2, 4, 6, 6]
        n("MaxPool", ["ap"], ["mp"], name="max", kernel_shape=[2, 2], strides=[2, 2]),  # [2, 4, 3, 3]
        n("Transpose", ["mp"], ["t"], name="tr", perm=[0, 2, 3, 1]),   # [2, 3, 3, 4]
        n("MatMul", ["t", "w"], ["mm"], name="mm", ),                  # [2, 3, 3, 5]
        n("Flatten", ["mm"], ["fl"], name="flat", axis=2),             # [6, 15]
        n("Gemm", ["fl", "wg", "cg"], ["gm"], name="gemm", transB=1, alpha=0.5, beta=2.0),  # [6, 7]
        n("Tanh", ["gm"], ["th"], name="tanh"),
        n("ReduceMean", ["th"], ["rm"], name="mean", axes=[-1], keepdims=1),  # [6, 1]
        n("Sub", ["th", "rm"], ["sb"], name="sub"),
        n("Div", ["sb", "two"], ["dv"], name="div"),
        n("Softmax", ["dv"], ["y"], name="softmax", axis=1),
    ]
    inits = [weights("w", (4, 5)), weights("wg", (7, 15)), weights("cg", (7,)), const("two", np.float32(2.0))]
    return model(nodes, [vinfo("x", [2, 4, 6, 6])], [vinfo("y", [6, 7])], inits)


def ok_split():
    """torch's fused q, k, v projection: Slice of Add(b, MatMul(x, W)) along the last axis; the
    reader makes the projection again from W's and b's sliced columns (known values)."""
    n = helper.make_node
    nodes = [n("MatMul", ["x", "W"], ["mm"], name="proj"), n("Add", ["b", "mm"], ["qkv"], name="bias"),
             n("Slice", ["qkv", "st", "en", "ax"], ["k"], name="slice_k"), n("Relu", ["k"], ["y"], name="relu")]
    inits = [const("W", np.arange(24, dtype=np.float32).reshape(4, 6)), const("b", np.arange(6, dtype=np.float32) * 10),
             const("st", [2]), const("en", [4]), const("ax", [-1])]
    return model(nodes, [vinfo("x", [3, 5, 4])], [vinfo("y", [3, 5, 2])], inits)


def ok_ir3():
    """IR 3 lists initializers among the graph inputs: the one real input is found."""
    m = conv_model()
    m.ir_version = 3
    m.graph.input.extend([vinfo("W", [4, 3, 3, 3]), vinfo("B", [4])])
    return m


def torch_models(out):
    """A small CNN and a 2-layer transformer exported by torch (opsets 13 and 17)."""
    import torch  # only here: the rest needs onnx alone
    torch.manual_seed(28)

    class Cnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 8, 7, 2, 3)
            self.bn = torch.nn.BatchNorm2d(8)
            self.pool = torch.nn.MaxPool2d(3, 2, 1)
            self.c3 = torch.nn.Conv2d(8, 8, 3, 1, 1)
            self.proj = torch.nn.Conv2d(8, 16, 1, 2)
            self.fc = torch.nn.Linear(16, 10)

        def forward(self, x):
            y = self.pool(torch.relu(self.bn(self.stem(x))))
            y = torch.relu(self.c3(y) + y)
            y = torch.nn.functional.adaptive_avg_pool2d(self.proj(y), 1).flatten(1)
            return self.fc(y)

    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu", batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    cases = [("torch_cnn", Cnn().eval(), torch.randn(2, 3, 16, 16), 13),
             ("torch_transformer", enc.eval(), torch.randn(2, 16, 64), 13),
             ("torch_transformer_opset17", enc.eval(), torch.randn(2, 16, 64), 17)]
    for name, mod, x, opset in cases:
        path = os.path.join(out, name + ".onnx")
        with tempfile.NamedTemporaryFile(dir=out, suffix=".tmp", delete=False) as f:
            tmp = f.name
        try:
            torch.onnx.export(mod, x, tmp, opset_version=opset, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, do_constant_folding=True)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def write(path, m):
    data = m if isinstance(m, bytes) else m.SerializeToString()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    cases = bad_cases()
    cases.update(ok_folding=ok_folding(), ok_ops=ok_ops(), ok_ir3=ok_ir3(), ok_split=ok_split())
    for name, m in cases.items():
        write(os.path.join(out, name + ".onnx"), m)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_models(out)
    print(f"make_onnx_cases: {len(cases) + 3} models in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
