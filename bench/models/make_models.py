#!/usr/bin/python3
"""Generates the ONNX benchmark models for Brigade's engine (random weights, fixed seeds).

Run with Debian's Python (python3-torch, python3-torchvision, python3-onnx):

    /usr/bin/python3 bench/models/make_models.py [--out bench/models] [--only NAME ...]

Writes <out>/<name>.onnx for
    resnet50      torchvision ResNet-50,      input  "input" [batch, 3, 224, 224] fp32
    mobilenet_v2  torchvision MobileNetV2,    input  "input" [batch, 3, 224, 224] fp32
    bert_base     BERT-base encoder (12 layers, hidden 768, 12 heads, FFN 3072), seq 128
    distilbert    DistilBERT-like encoder (6 layers, same widths), seq 128
The encoders take "input_ids" and "attention_mask" (int64 [batch, 128]) and return
"last_hidden_state" [batch, 128, 768]. All models are exported at opset 13 with a dynamic batch
dimension. Random weights are fine for latency; outputs are compared against ONNX Runtime on the
same weights (bench/onnx_compare.sh). The CNNs' BatchNorm statistics are calibrated on random
images so that activations stay at unit scale (see calibrate_batchnorm). The output directory is
git-ignored: never commit models.
"""

import argparse
import math
import os
import sys

import torch
from torch import nn
from torch.nn import functional as F

OPSET = 13
SEQ = 128


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores + mask, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).contiguous()
        b, s, _, _ = ctx.shape
        return self.out(ctx.view(b, s, self.heads * self.head_dim))


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.norm1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.ffn_out = nn.Linear(ffn, hidden)
        self.norm2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        x = self.norm1(x + self.attention(x, mask))
        return self.norm2(x + self.ffn_out(F.gelu(self.ffn_in(x))))


class Encoder(nn.Module):
    """BERT-style encoder written in plain torch (no transformers dependency)."""

    def __init__(self, layers, hidden=768, heads=12, ffn=3072, vocab=30522, positions=512,
                 token_types=True):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(positions, hidden)
        self.types = nn.Embedding(2, hidden) if token_types else None
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        x = self.words(input_ids) + self.positions(positions)
        if self.types is not None:
            x = x + self.types(torch.zeros_like(input_ids))
        x = self.norm(x)
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


def export(model, args, path, input_names, output_names):
    model.eval()
    dynamic = {name: {0: "batch"} for name in input_names + output_names}
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=OPSET, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic,
                          do_constant_folding=True)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)", flush=True)


def make_cnn(name, out):
    import torchvision  # python3-torchvision
    torch.manual_seed(0)
    builder = {"resnet50": torchvision.models.resnet50,
               "mobilenet_v2": torchvision.models.mobilenet_v2}[name]
    model = builder(weights=None)
    calibrate_batchnorm(model, torch.rand(16, 3, 224, 224) * 2 - 1)
    export(model, (torch.randn(1, 3, 224, 224),), os.path.join(out, f"{name}.onnx"),
           ["input"], ["logits"])


def calibrate_batchnorm(model, images):
    """Sets each BatchNorm's running statistics to those of `images` (as training would).

    With freshly initialized statistics (mean 0, variance 1) activations shrink layer after layer
    (MobileNetV2's logits come out near 1e-9), which makes an output comparison meaningless and
    can push intermediates toward denormals; calibrated statistics keep every layer's output at
    unit scale, as in a trained network. Inputs in [-1, 1), like the benchmark's.
    """
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for batch in images.split(4):
            model(batch)


def make_encoder(name, out):
    torch.manual_seed(0)
    layers, token_types = {"bert_base": (12, True), "distilbert": (6, False)}[name]
    model = Encoder(layers, token_types=token_types)
    ids = torch.randint(0, 30522, (1, SEQ), dtype=torch.long)
    mask = torch.ones(1, SEQ, dtype=torch.long)
    export(model, (ids, mask), os.path.join(out, f"{name}.onnx"),
           ["input_ids", "attention_mask"], ["last_hidden_state"])


MODELS = {"resnet50": make_cnn, "mobilenet_v2": make_cnn, "bert_base": make_encoder,
          "distilbert": make_encoder}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__)))
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS), default=sorted(MODELS))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.only:
        MODELS[name](name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
