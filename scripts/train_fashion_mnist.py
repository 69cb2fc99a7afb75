#!/usr/bin/python3
"""Trains a Fashion-MNIST classifier and writes it as a Triton-layout Brigade model directory.

Run with Debian's python (python3-torch, python3-numpy; the dataset from dataset-fashion-mnist):

    /usr/bin/python3 scripts/train_fashion_mnist.py --arch cnn \
        --onnx-out src/engine/onnx/testdata/fashion_mnist.onnx
    /usr/bin/python3 scripts/train_fashion_mnist.py --arch small \
        --onnx-out src/engine/onnx/testdata/fashion_mnist_small.onnx

Writes models/<name>/{config.pbtxt, labels.txt, metrics.json, 1/model.pt}. The model takes FP32
`image` [N,1,28,28] with pixels in [0,1] (normalization happens inside the model) and returns FP32
`logits` [N,10]. model.pt is TorchScript (frozen, eval mode) carrying its signature as the extra
file brigade/signature.json, which the TorchScript backend reads when a config declares no
inputs/outputs. --onnx-out also exports ONNX (opset 13, dynamic batch dimension).

Training is deterministic: fixed seeds, deterministic algorithms, a fixed thread count (torch and
OpenBLAS) and a seeded shuffle, so two runs with the same flags give the same weights, the same
accuracy and the same model.pt bytes (metrics.json differs only in training_seconds). Measured on
the 2-core dev machine: cnn about 3 minutes on one otherwise idle core, small about 10 seconds.
"""

import argparse
import gzip
import json
import os
import struct
import sys
import time

# TorchScript serializes some sets in hash order; a fixed hash seed makes the saved files
# byte-for-byte reproducible, so regenerating them leaves git clean.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)


def _thread_flag():
    pre_parser = argparse.ArgumentParser(add_help=False)
    pre_parser.add_argument("--threads", type=int, default=1)
    return pre_parser.parse_known_args()[0].threads


# Both thread pools read the environment when torch loads them, so set it first:
# - libgomp's wait policy: spinning OpenMP workers make multi-threaded training many times slower
#   whenever another process (a build) wants the same cores;
# - OpenBLAS (Debian's libblas.so.3 alternative) keeps its own pool, which torch.set_num_threads
#   does not size; without this it uses every core on top of torch's threads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(_thread_flag()))

import numpy as np  # noqa: E402  (after the environment is set)
import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DATA_DIR = "/usr/share/datasets/fashion-mnist"
CLASS_NAMES = [
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
]
MAX_BATCH_SIZE = 32
SIGNATURE_FILE = "brigade/signature.json"

# Per-architecture training defaults, chosen so each trains in under 5 minutes on one core.
ARCH_DEFAULTS = {
    "cnn": {"name": "fashion_mnist", "epochs": 8, "lr": 3e-3},
    "small": {"name": "fashion_mnist_small", "epochs": 20, "lr": 3e-3},
}


def read_idx(path):
    """Parses an IDX file (gzip-compressed): big-endian header, then unsigned bytes."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = struct.unpack_from(">HBB", data, 0)
    if zero != 0 or dtype_code != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {zero:#x} {dtype_code:#x})")
    dims = struct.unpack_from(">" + "I" * ndim, data, 4)
    offset = 4 + 4 * ndim
    count = int(np.prod(dims))
    if len(data) - offset != count:
        raise ValueError(f"{path}: expected {count} values after the header, "
                         f"found {len(data) - offset}")
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(dims)


def load_split(data_dir, prefix):
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if images.shape[0] != labels.shape[0] or images.shape[1:] != (28, 28):
        raise ValueError(f"{prefix}: unexpected shapes {images.shape} / {labels.shape}")
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)  # [N,1,28,28] in [0,1]
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


class Normalize(nn.Module):
    """(x - mean) / std with the training set's statistics stored as buffers."""

    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(float(mean)))
        self.register_buffer("std", torch.tensor(float(std)))

    def forward(self, x):
        return (x - self.mean) / self.std


class FashionCnn(nn.Module):
    """Two conv blocks (conv3x3 + BN + ReLU + 2x2 max-pool) and a small MLP head."""

    def __init__(self, mean, std):
        super().__init__()
        self.normalize = Normalize(mean, std)
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.dropout = nn.Dropout(0.25)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, image):
        x = self.normalize(image)
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


class FashionMlp(nn.Module):
    """A one-hidden-layer MLP: about 20x fewer multiply-adds than FashionCnn."""

    def __init__(self, mean, std):
        super().__init__()
        self.normalize = Normalize(mean, std)
        self.fc1 = nn.Linear(28 * 28, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, image):
        x = torch.flatten(self.normalize(image), 1)
        return self.fc2(F.relu(self.fc1(x)))


def build_model(arch, mean, std):
    if arch == "cnn":
        return FashionCnn(mean, std)
    if arch == "small":
        return FashionMlp(mean, std)
    raise ValueError(f"unknown arch {arch}")


def evaluate(model, x, y, batch_size=1000):
    model.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, x.shape[0], batch_size):
            logits = model(x[start:start + batch_size])
            correct += int((logits.argmax(1) == y[start:start + batch_size]).sum())
    return correct / x.shape[0]


def train(model, x, y, epochs, lr, batch_size, seed):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps_per_epoch = (x.shape[0] + batch_size - 1) // batch_size
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=lr, epochs=epochs, steps_per_epoch=steps_per_epoch)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(x.shape[0], generator=generator)
        total_loss = 0.0
        for step in range(steps_per_epoch):
            index = order[step * batch_size:(step + 1) * batch_size]
            loss = F.cross_entropy(model(x[index]), y[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total_loss += float(loss) * index.shape[0]
        print(f"epoch {epoch + 1}/{epochs}: train loss {total_loss / x.shape[0]:.4f}",
              file=sys.stderr, flush=True)


def signature_json():
    return json.dumps({
        "inputs": [{"name": "image", "datatype": "FP32", "shape": [-1, 1, 28, 28]}],
        "outputs": [{"name": "logits", "datatype": "FP32", "shape": [-1, 10]}],
    }, indent=2)


def config_pbtxt(name):
    return f'''name: "{name}"
platform: "pytorch_libtorch"
max_batch_size: {MAX_BATCH_SIZE}
input [
  {{
    name: "image"
    data_type: TYPE_FP32
    dims: [ 1, 28, 28 ]
  }}
]
output [
  {{
    name: "logits"
    data_type: TYPE_FP32
    dims: [ 10 ]
    label_filename: "labels.txt"
  }}
]
# Brigade's adaptive batcher (src/scheduler/p99_model_policy.h): a lone request runs at once
# instead of waiting for company, and batches grow with the load as the latency profile allows.
adaptive_batching {{
  policy: P99_MODEL
  target_p99_microseconds: 20000
}}
instance_group [
  {{
    count: 1
    kind: KIND_CPU
  }}
]
'''


def export_torchscript(model, path, check_input):
    model.eval()
    scripted = torch.jit.freeze(torch.jit.script(model))
    with torch.inference_mode():
        expected = model(check_input)
    scripted.save(path, _extra_files={SIGNATURE_FILE: signature_json()})
    # Check the saved file, not the in-memory module: it is what the server loads.
    files = {SIGNATURE_FILE: ""}
    loaded = torch.jit.load(path, _extra_files=files)
    with torch.inference_mode():
        actual = loaded(check_input)
    if not files[SIGNATURE_FILE] or not torch.allclose(actual, expected, atol=1e-4, rtol=1e-4):
        raise RuntimeError(f"{path}: reloaded TorchScript model does not match the trained one")


def export_onnx(model, path, check_input):
    model.eval()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    torch.onnx.export(model, check_input[:1], path, opset_version=13, input_names=["image"],
                      output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      do_constant_folding=True)
    try:
        import onnx  # python3-onnx; only used to validate the export.
        onnx.checker.check_model(onnx.load(path))
    except ImportError:
        print("python3-onnx not installed: ONNX export not checked", file=sys.stderr)


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", choices=sorted(ARCH_DEFAULTS), default="cnn")
    parser.add_argument("--name", help="model name (default: fashion_mnist[_small])")
    parser.add_argument("--models-dir", default="models", help="model repository to write into")
    parser.add_argument("--onnx-out", help="also export ONNX (opset 13) to this path")
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (results are reproducible for a fixed count)")
    args = parser.parse_args()
    defaults = ARCH_DEFAULTS[args.arch]
    name = args.name or defaults["name"]
    epochs = args.epochs or defaults["epochs"]
    lr = args.lr or defaults["lr"]

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)

    x_train, y_train = load_split(args.data_dir, "train")
    x_test, y_test = load_split(args.data_dir, "t10k")
    mean, std = float(x_train.mean()), float(x_train.std())

    model = build_model(args.arch, mean, std)
    params = sum(p.numel() for p in model.parameters())
    start = time.monotonic()
    train(model, x_train, y_train, epochs, lr, args.batch_size, args.seed)
    train_seconds = time.monotonic() - start
    accuracy = evaluate(model, x_test, y_test)
    print(f"{name}: test accuracy {accuracy:.4f}, {params} parameters, "
          f"trained in {train_seconds:.1f} s", file=sys.stderr)

    model_dir = os.path.join(args.models_dir, name)
    os.makedirs(os.path.join(model_dir, "1"), exist_ok=True)
    export_torchscript(model, os.path.join(model_dir, "1", "model.pt"), x_test[:8])
    write_text(os.path.join(model_dir, "config.pbtxt"), config_pbtxt(name))
    write_text(os.path.join(model_dir, "labels.txt"), "\n".join(CLASS_NAMES) + "\n")
    metrics = {
        "model": name,
        "arch": args.arch,
        "test_accuracy": round(accuracy, 4),
        "test_examples": int(x_test.shape[0]),
        "parameter_count": params,
        "training_seconds": round(train_seconds, 1),
        "epochs": epochs,
        "batch_size": args.batch_size,
        "learning_rate": lr,
        "threads": args.threads,
        "seed": args.seed,
        "torch_version": torch.__version__,
        "input_mean": round(mean, 6),
        "input_std": round(std, 6),
    }
    write_text(os.path.join(model_dir, "metrics.json"), json.dumps(metrics, indent=2) + "\n")
    if args.onnx_out:
        export_onnx(model, args.onnx_out, x_test[:8])
    print(json.dumps(metrics))


if __name__ == "__main__":
    main()
