#!/usr/bin/python3
"""Writes the demo repository's generated files, which are not committed (43 MB, reproducible):

    models/imagenet_resnet18/1/model.onnx  torchvision ResNet-18 with RANDOM weights (seed 0):
                                           the plumbing of an ImageNet classifier, not its
                                           accuracy; its top-5 answers are arbitrary classes
    models/imagenet_top5/1/labels.txt      the 1000 ImageNet class names, from the metadata that
                                           Debian's python3-torchvision ships (no download)

Run with Debian's Python (python3-torch, python3-torchvision); scripts/setup runs it when a file
is missing. Idempotent: existing files are kept unless --force.

    /usr/bin/python3 scripts/make_demo_models.py [--force]
"""

import argparse
import os
import sys

import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "models", "imagenet_resnet18", "1", "model.onnx")
LABELS = os.path.join(ROOT, "models", "imagenet_top5", "1", "labels.txt")


def write_model(path):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None)
    # Fresh BatchNorm statistics shrink activations layer after layer; statistics of random
    # images keep every layer at unit scale, as a trained network's are.
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            module.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.rand(4, 3, 224, 224) * 2 - 1)
    model.eval()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), path + ".tmp", opset_version=13,
                          input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                          do_constant_folding=True)
    os.replace(path + ".tmp", path)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")


def write_labels(path):
    categories = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
    assert len(categories) == 1000, len(categories)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(categories) + "\n")
    os.replace(path + ".tmp", path)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--force", action="store_true", help="rewrite existing files")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.force or not os.path.exists(MODEL):
        write_model(MODEL)
    if args.force or not os.path.exists(LABELS):
        write_labels(LABELS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
