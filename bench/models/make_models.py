#!/usr/bin/python3
"""Generates the ONNX benchmark models for Brigade's engine (random weights, fixed seeds).

Run with Debian's Python (python3-torch, python3-torchvision, python3-onnx):

    /usr/bin/python3 bench/models/make_models.py [--out bench/models] [--only NAME ...] [--list]

Writes <out>/<name>.onnx. The original four (the engine was tuned on these):
    resnet50      torchvision ResNet-50,      input  "input" [batch, 3, 224, 224] fp32
    mobilenet_v2  torchvision MobileNetV2,    input  "input" [batch, 3, 224, 224] fp32
    bert_base     BERT-base encoder (12 layers, hidden 768, 12 heads, FFN 3072), seq 128
    distilbert    DistilBERT-like encoder (6 layers, same widths), seq 128
The encoders take "input_ids" and "attention_mask" (int64 [batch, 128]) and return
"last_hidden_state" [batch, 128, 768]. `--torchscript` also writes <name>.pt for them: the same
module and weights traced for the TorchScript backend (demo/case_study uses it).

The broad set (issue 24: the families people bring; `--only broad` selects all of them):
    mobilenet_v3_large  hard-swish / hard-sigmoid, SE blocks           "input" [b, 3, 224, 224]
    efficientnet_b0     SiLU (Sigmoid·Mul), SE blocks                   "input" [b, 3, 224, 224]
    densenet121         BN → ReLU → Conv pre-activation, 58 Concats    "input" [b, 3, 224, 224]
    regnet_y_400mf      grouped (non-depthwise) convolutions, SE       "input" [b, 3, 224, 224]
    convnext_tiny       7×7 depthwise, LayerNorm over permuted NHWC    "input" [b, 3, 224, 224]
    vit_b_16            ViT-B/16: patch conv + 12 encoder layers (MHA) "input" [b, 3, 224, 224]
    swin_t              Swin-T: shifted-window attention (Roll as Slice/Concat), LayerNorm
                                                                        "input" [b, 3, 224, 224]
    lraspp_mobilenet_v3 LR-ASPP segmentation, bilinear Resize to input "input" [b, 3, 320, 320]
    fpn_detector        DBNet-style text detector: ResNet-18, torchvision FPN (nearest Resize),
                        levels upsampled and concatenated, bilinear ×4 "input" [b, 3, 320, 320]
    lstm_seq            2-layer bidirectional LSTM (hidden 256) + Linear "input" [b, 64, 128]
    gru_seq             the same with GRU                               "input" [b, 64, 128]
    control_flow        torch.jit.script model: a Loop (trip count from the input's shape) and
                        an If on the data                               "input" [b, 64]
    distilbert_opset17  the DistilBERT encoder exported at opset 17 (LayerNormalization op)
Every model has one output and a dynamic batch dimension. Models are exported at opset 13
unless named otherwise (distilbert_opset17). Random weights are fine for latency; outputs are
compared against ONNX Runtime on the same weights (bench/onnx_compare.sh, bench/onnx_broad.py).
The BatchNorm statistics of every model that has BatchNorm are calibrated on random images so
that activations stay at unit scale (see calibrate_batchnorm). The output directory is
git-ignored: never commit models.
"""

import argparse
import math
import os
import sys
import time

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


def export(model, args, path, input_names, output_names, opset=OPSET):
    model.eval()
    dynamic = {name: {0: "batch"} for name in input_names + output_names}
    # Under no_grad, nn.MultiheadAttention (ViT) takes its fused fast path, which has no ONNX
    # export; with gradients enabled it runs (and exports) the plain matmul/softmax graph.
    grad = any(isinstance(m, nn.MultiheadAttention) for m in model.modules())
    with torch.set_grad_enabled(grad):
        torch.onnx.export(model, args, path, opset_version=opset, input_names=input_names,
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


def make_encoder(name, out, torchscript=False):
    torch.manual_seed(0)
    layers, token_types = {"bert_base": (12, True), "distilbert": (6, False)}[name]
    model = Encoder(layers, token_types=token_types)
    ids = torch.randint(0, 30522, (1, SEQ), dtype=torch.long)
    mask = torch.ones(1, SEQ, dtype=torch.long)
    export(model, (ids, mask), os.path.join(out, f"{name}.onnx"),
           ["input_ids", "attention_mask"], ["last_hidden_state"])
    if torchscript:
        trace_torchscript(model, (ids, mask), os.path.join(out, f"{name}.pt"))


def trace_torchscript(model, args, path):
    """Writes `model` (the very module just exported to ONNX) as TorchScript, for libtorch.

    Traced under no_grad in eval mode; the trace is checked against the eager module on a second
    batch (another batch size, a padded mask) so that a shape baked in by tracing would show.
    """
    model.eval()
    with torch.no_grad():
        traced = torch.jit.trace(model, args)
        ids = torch.randint(0, 30522, (2, SEQ), dtype=torch.long)
        mask = torch.ones(2, SEQ, dtype=torch.long)
        mask[1, SEQ // 2:] = 0
        diff = (traced(ids, mask) - model(ids, mask)).abs().max().item()
    if diff > 1e-4:
        raise SystemExit(f"{path}: the trace differs from the module by {diff}")
    traced.save(path)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB; trace = module within {diff:.1e})",
          flush=True)


class FirstOutput(nn.Module):
    """Returns the "out" entry of a torchvision segmentation model's dict output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class FpnDetector(nn.Module):
    """A DBNet-style text detector built from torchvision parts.

    ResNet-18's four stages (strides 4 to 32) feed torchvision's FeaturePyramidNetwork (1×1
    laterals, nearest-neighbour top-down Resize to the lateral's size, 3×3 outputs); every level
    is resized (nearest) to the stride-4 level's size and concatenated, a conv head makes one
    probability map, and a bilinear ×4 Resize brings it back to the input's size: the Resize- and
    Concat-heavy neck the issue's detector profile showed.
    """

    def __init__(self, channels=128):
        super().__init__()
        import torchvision  # python3-torchvision
        from torchvision.models._utils import IntermediateLayerGetter
        backbone = torchvision.models.resnet18(weights=None)
        self.body = IntermediateLayerGetter(
            backbone, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"})
        self.fpn = torchvision.ops.FeaturePyramidNetwork([64, 128, 256, 512], channels)
        self.head = nn.Sequential(
            nn.Conv2d(4 * channels, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 1, 1))

    def forward(self, x):
        levels = list(self.fpn(self.body(x)).values())
        size = levels[0].shape[-2:]
        merged = [levels[0]] + [F.interpolate(level, size=size, mode="nearest")
                                for level in levels[1:]]
        logits = self.head(torch.cat(merged, 1))
        return torch.sigmoid(F.interpolate(logits, scale_factor=4.0, mode="bilinear",
                                           align_corners=False))


class SequenceModel(nn.Module):
    """A CRNN-style recogniser's tail: a 2-layer bidirectional LSTM or GRU over 64 steps of 128
    features (batch first), then a Linear to 97 classes per step."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(128, 256, num_layers=2, batch_first=True, bidirectional=True)
        self.classify = nn.Linear(512, 97)

    def forward(self, x):
        hidden, _ = self.rnn(x)
        return self.classify(hidden)


class ControlFlow(nn.Module):
    """Scripted control flow: exported through torch.jit.script, the loop stays an ONNX Loop
    (its trip count comes from the input's shape, so it cannot be unrolled at export) and the
    data-dependent branch an If with a subgraph per side."""

    def __init__(self):
        super().__init__()
        self.step = nn.Linear(64, 64)
        self.positive = nn.Linear(64, 10)
        self.negative = nn.Linear(64, 10)

    def forward(self, x):
        h = x
        for _ in range(x.shape[1] // 16):
            h = torch.tanh(self.step(h)) + h
        if bool(h.mean() > 0):
            return self.positive(h)
        return self.negative(h)


# The broad set's image models: name -> (torchvision builder, input side).
BROAD_IMAGE = {
    "mobilenet_v3_large": ("mobilenet_v3_large", 224),
    "efficientnet_b0": ("efficientnet_b0", 224),
    "densenet121": ("densenet121", 224),
    "regnet_y_400mf": ("regnet_y_400mf", 224),
    "convnext_tiny": ("convnext_tiny", 224),
    "vit_b_16": ("vit_b_16", 224),
    "swin_t": ("swin_t", 224),
    "lraspp_mobilenet_v3": (None, 320),
    "fpn_detector": (None, 320),
}


def make_broad_image(name, out):
    import torchvision  # python3-torchvision
    builder, side = BROAD_IMAGE[name]
    torch.manual_seed(0)
    if name == "lraspp_mobilenet_v3":
        model = FirstOutput(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None))
    elif name == "fpn_detector":
        model = FpnDetector()
    else:
        model = getattr(torchvision.models, builder)(weights=None)
    if name == "vit_b_16":
        # torchvision zero-initializes ViT's classifier (as fine-tuning wants): every logit
        # would be 0 whatever the input, and an output comparison vacuous.
        nn.init.normal_(model.heads.head.weight, std=0.02)
    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        calibrate_batchnorm(model, torch.rand(16, 3, side, side) * 2 - 1)
    output = "out" if name in ("lraspp_mobilenet_v3", "fpn_detector") else "logits"
    export(model, (torch.randn(1, 3, side, side),), os.path.join(out, f"{name}.onnx"),
           ["input"], [output])


def make_sequence(name, out):
    torch.manual_seed(0)
    model = SequenceModel({"lstm_seq": nn.LSTM, "gru_seq": nn.GRU}[name])
    export(model, (torch.randn(1, 64, 128),), os.path.join(out, f"{name}.onnx"), ["input"],
           ["logits"])


def make_control_flow(name, out):
    torch.manual_seed(0)
    model = torch.jit.script(ControlFlow().eval())
    export(model, (torch.randn(1, 64),), os.path.join(out, f"{name}.onnx"), ["input"],
           ["logits"])


def make_encoder_opset17(name, out):
    torch.manual_seed(0)
    model = Encoder(6, token_types=False)  # distilbert's weights: same seed, same modules
    ids = torch.randint(0, 30522, (1, SEQ), dtype=torch.long)
    mask = torch.ones(1, SEQ, dtype=torch.long)
    export(model, (ids, mask), os.path.join(out, f"{name}.onnx"),
           ["input_ids", "attention_mask"], ["last_hidden_state"], opset=17)


ORIGINAL = {"resnet50": make_cnn, "mobilenet_v2": make_cnn, "bert_base": make_encoder,
            "distilbert": make_encoder}
BROAD = {**{name: make_broad_image for name in BROAD_IMAGE},
         "lstm_seq": make_sequence, "gru_seq": make_sequence, "control_flow": make_control_flow,
         "distilbert_opset17": make_encoder_opset17}
MODELS = {**ORIGINAL, **BROAD}
# Names --only accepts besides the models': each selects a group.
GROUPS = {"original": list(ORIGINAL), "broad": list(BROAD), "all": list(MODELS)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__)))
    parser.add_argument("--only", nargs="*", choices=list(MODELS) + list(GROUPS),
                        default=["original"],
                        help="models or groups (original, broad, all); default: original")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    parser.add_argument("--torchscript", action="store_true",
                        help="also write <name>.pt (torch.jit.trace of the same module and "
                             "weights) for bert_base and distilbert, for the TorchScript backend")
    args = parser.parse_args()
    if args.list:
        for group in ("original", "broad"):
            print(f"{group}: {' '.join(GROUPS[group])}")
        return 0
    names = []
    for name in args.only:
        for model in GROUPS.get(name, [name]):
            if model not in names:
                names.append(model)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in names:
        start = time.monotonic()
        if args.torchscript and MODELS[name] is make_encoder:
            make_encoder(name, args.out, torchscript=True)
        else:
            MODELS[name](name, args.out)
        print(f"  {name}: {time.monotonic() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
