#!/usr/bin/python3
"""The reference models of issue 28 as PyTorch modules (docs/models.md, "Models").

Each model is a function (seed, batch) -> (module in eval mode, example input tensor), built
with random weights from fixed seeds (nothing is downloaded), so that scripts/export_models.py
(which writes the .onnx files) and scripts/check_pytorch.py (which reruns the original module
against the chip's output) rebuild exactly the same network from the seed alone:

  resnet50           torchvision.models.resnet50(weights=None)      input [B, 3, 224, 224]
  bert_base          12 nn.TransformerEncoderLayer, 768 / 12 / 3072  input [B, 128, 768]
  cnn_small          every conv shape the kernels support            input [B, 3, 16, 16]
  transformer_small  2 nn.TransformerEncoderLayer, 64 / 4 / 128      input [B, 16, 64]

Random init is made realistic where the library's default would leave parts trivial:
  - batch norm: the running statistics of a freshly built network are 0 and 1 and its affine
    parameters 1 and 0, so folding it into Conv (the exporter does, in eval mode) would give
    all-zero biases. calibrate_bn() sets each BN's running statistics from a random batch (as
    training would: every channel's output is then normalised) and draws gamma and beta at
    random, so the folded Conv biases are real.
  - attention and LayerNorm: nn.MultiheadAttention zeroes its projection biases and LayerNorm
    starts at gamma 1, beta 0; both are redrawn at random.
Run under /usr/bin/python3 (Debian's python3-torch 1.13 and python3-torchvision 0.14).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# The input is drawn after torch.manual_seed(seed + INPUT_SEED_OFFSET): a stream apart from the
# weights', so that another batch size changes the input and never the weights.
INPUT_SEED_OFFSET = 1_000_003
# batch norm calibration batch (its own stream, independent of the batch size exported)
CALIB_SEED_OFFSET = 2_000_003
CALIB_BATCH = 4


def _uniform_(t, lo, hi):
    with torch.no_grad():
        t.uniform_(lo, hi)


@torch.no_grad()
def calibrate_bn(model, make_batch, branch_ends=()):
    """Sets every BatchNorm2d's running statistics to those of one random batch (cumulative
    average over one pass, as training converges to) and its gamma, beta at random: gamma
    ~ U(0.5, 1.5), but U(0.2, 0.5) for the BNs in branch_ends, those that end a residual
    branch. Trained ResNets keep those small (torchvision's zero_init_residual starts them at
    0); at U(0.5, 1.5) the residual stream of ResNet-50 grows through its 16 blocks into a
    chaotic regime where one bf16 rounding per layer moves the logits by 10%, not 1%."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    ends = set(id(bn) for bn in branch_ends)
    for bn in bns:
        if id(bn) in ends:
            _uniform_(bn.weight, 0.2, 0.5)
        else:
            _uniform_(bn.weight, 0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
        bn.reset_running_stats()
        bn.momentum = None  # cumulative: one batch gives exactly its statistics
    model.train()
    model(make_batch())
    model.eval()
    for bn in bns:
        bn.momentum = 0.1


def _input(seed, shape):
    torch.manual_seed(seed + INPUT_SEED_OFFSET)
    return torch.randn(*shape, dtype=torch.float32)


def _calib_batch(seed, shape):
    def make():
        torch.manual_seed(seed + CALIB_SEED_OFFSET)
        return torch.randn(CALIB_BATCH, *shape[1:], dtype=torch.float32)
    return make


# ---------------------------------------------------------------- CNNs

def resnet50(seed, batch=8):
    import torchvision
    torch.manual_seed(seed)
    model = torchvision.models.resnet50(weights=None)
    shape = (batch, 3, 224, 224)
    ends = [b.bn3 for b in model.modules() if isinstance(b, torchvision.models.resnet.Bottleneck)]
    calibrate_bn(model, _calib_batch(seed, shape), ends)
    return model.eval(), _input(seed, shape)


def _conv_bn(cin, cout, k, stride, pad):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, pad, bias=False), nn.BatchNorm2d(cout))


class _Block(nn.Module):
    """ResNet's basic block: two 3x3 convs, the first maybe strided, and the residual Add
    (through a strided 1x1 projection when the shape changes) before the last Relu."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = _conv_bn(cin, cout, 3, stride, 1)
        self.conv2 = _conv_bn(cout, cout, 3, 1, 1)
        self.proj = _conv_bn(cin, cout, 1, stride, 0) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = self.conv2(F.relu(self.conv1(x)))
        return F.relu(y + (self.proj(x) if self.proj is not None else x))


class CnnSmall(nn.Module):
    """[B, 3, 16, 16] -> 10 logits: a 7x7/2 pad-3 stem, MaxPool 3x3/2 pad 1, an identity
    residual block (3x3 pad 1 convs), a downsampling block (3x3/2 and a strided 1x1 projection),
    a 1x1 conv, GlobalAveragePool, Flatten and a Gemm classifier."""

    def __init__(self):
        super().__init__()
        self.stem = _conv_bn(3, 8, 7, 2, 3)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.block1 = _Block(8, 8, 1)
        self.block2 = _Block(8, 16, 2)
        self.head = _conv_bn(16, 32, 1, 1, 0)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.stem(x)))
        x = self.block2(self.block1(x))
        x = F.relu(self.head(x))
        x = F.adaptive_avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


def cnn_small(seed, batch=2):
    torch.manual_seed(seed)
    model = CnnSmall()
    for m in model.modules():
        if isinstance(m, nn.Conv2d):  # as torchvision's ResNet does
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    shape = (batch, 3, 16, 16)
    calibrate_bn(model, _calib_batch(seed, shape), [model.block1.conv2[1], model.block2.conv2[1]])
    return model.eval(), _input(seed, shape)


# ---------------------------------------------------------------- transformers

class Encoder(nn.Module):
    """A stack of post-norm nn.TransformerEncoderLayer (BERT's order: attention, Add,
    LayerNorm, FFN with GELU (erf), Add, LayerNorm) on an embedded sequence [B, S, D]; each
    layer built on its own (nn.TransformerEncoder deep-copies one layer, giving every layer
    the same weights)."""

    def __init__(self, layers, d_model, heads, ffn):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0, activation="gelu",
                                       batch_first=True) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@torch.no_grad()
def _randomise_transformer(model, d_model):
    bound = 1.0 / math.sqrt(d_model)
    for layer in model.layers:
        layer.self_attn.in_proj_bias.uniform_(-bound, bound)
        layer.self_attn.out_proj.bias.uniform_(-bound, bound)
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.8, 1.2)
            norm.bias.normal_(0.0, 0.1)


def _transformer(seed, batch, layers, d_model, heads, ffn, seq):
    torch.manual_seed(seed)
    model = Encoder(layers, d_model, heads, ffn)
    _randomise_transformer(model, d_model)
    return model.eval(), _input(seed, (batch, seq, d_model))


def bert_base(seed, batch=8):
    return _transformer(seed, batch, layers=12, d_model=768, heads=12, ffn=3072, seq=128)


def transformer_small(seed, batch=2):
    return _transformer(seed, batch, layers=2, d_model=64, heads=4, ffn=128, seq=16)


# name -> (builder, default batch, is a classifier (its output is logits: top-1 agreement is
# checked), one sample's input shape, one sample's output shape)
MODELS = {
    "resnet50": (resnet50, 8, True, (3, 224, 224), (1000,)),
    "bert_base": (bert_base, 8, False, (128, 768), (128, 768)),
    "cnn_small": (cnn_small, 2, True, (3, 16, 16), (10,)),
    "transformer_small": (transformer_small, 2, False, (16, 64), (16, 64)),
}
SMALL = ("cnn_small", "transformer_small")


def run(model, x):
    """The module's float32 output for x, computed op by op as the ONNX exporter traces it.
    Under no_grad, PyTorch 1.13 runs an encoder layer in eval mode as one fused kernel
    (torch._transformer_encoder_layer_fwd, torch._native_multi_head_attention); with grad
    enabled and the weights requiring it, it takes the op-by-op path, so the bf16 emulation
    (check_pytorch.py) sees every op and planted errors reach the ops they edit."""
    with torch.enable_grad():
        return model(x).detach()


def build(name, seed=0, batch=None):
    """(module, input) for a model of MODELS; batch None takes its default."""
    fn, default_batch = MODELS[name][:2]
    return fn(seed, default_batch if batch is None else batch)
