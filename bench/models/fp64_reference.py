#!/usr/bin/python3
"""Measures how far ONNX Runtime and Brigade each are from the exact (float64) answer.

bench/onnx_compare.sh compares Brigade with ONNX Runtime; both compute in float32, so neither is
the truth. This script rebuilds a benchmark model exactly as make_models.py does (same seeds),
runs it in float64 in PyTorch on the inputs ONNX Runtime used, and prints the max absolute and
RMS error of each engine against that reference, plus how many elements each has outside
1e-5 abs + 1e-4 rel — the float32 noise floor the ORT tolerance has to be read against.

    node ort-run.js bench/models/M.onnx --threads 1 --runs 1 --warmup 0 --dim batch=2 --dump D
    build/bench/onnx_run --model bench/models/M.onnx --threads 1 --compare D --dump-outputs D/ours
    /usr/bin/python3 bench/models/fp64_reference.py M D

M is one of make_models.py's names; D holds ORT's inputs/outputs (manifest.json) and D/ours
Brigade's outputs (output_<name>.bin).
"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402  (the generator: same modules, same seeds)

NUMPY_TYPES = {"float32": np.float32, "int64": np.int64}


def build(name):
    torch.manual_seed(0)
    if name in ("resnet50", "mobilenet_v2"):
        import torchvision  # python3-torchvision
        builder = {"resnet50": torchvision.models.resnet50,
                   "mobilenet_v2": torchvision.models.mobilenet_v2}[name]
        model = builder(weights=None)
        make_models.calibrate_batchnorm(model, torch.rand(16, 3, 224, 224) * 2 - 1)
        return model
    layers, token_types = {"bert_base": (12, True), "distilbert": (6, False)}[name]
    return make_models.Encoder(layers, token_types=token_types)


def load(folder, entry):
    data = np.fromfile(os.path.join(folder, entry["file"]), dtype=NUMPY_TYPES[entry["type"]])
    return data.reshape(entry["shape"])


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    name, dump = sys.argv[1], sys.argv[2]
    torch.set_num_threads(os.cpu_count() or 1)
    with open(os.path.join(dump, "manifest.json")) as f:
        manifest = json.load(f)
    model = build(name).eval().double()
    args = []
    for entry in manifest["inputs"]:
        tensor = torch.from_numpy(load(dump, entry))
        args.append(tensor.double() if tensor.is_floating_point() else tensor)
    with torch.no_grad():
        reference = model(*args).numpy()
    for entry in manifest["outputs"]:
        ort = load(dump, entry).astype(np.float64)
        ours = np.fromfile(os.path.join(dump, "ours", f"output_{entry['name']}.bin"),
                           dtype=np.float32).astype(np.float64).reshape(ort.shape)
        scale = np.abs(reference).max()
        print(f"{name} {entry['name']} {list(ort.shape)}: |reference| max {scale:.4g}")
        for engine, values in (("onnxruntime", ort), ("brigade", ours)):
            err = np.abs(values - reference)
            outside = int((err > 1e-5 + 1e-4 * np.abs(reference)).sum())
            print(f"  {engine:<11} vs float64: max abs {err.max():.3g}  rms "
                  f"{np.sqrt((err ** 2).mean()):.3g}  outside 1e-5+1e-4rel {outside}/{err.size}")
        err = np.abs(ours - ort)
        print(f"  brigade vs onnxruntime: max abs {err.max():.3g}  rms "
              f"{np.sqrt((err ** 2).mean()):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
