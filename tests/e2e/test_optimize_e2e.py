"""End to end: `brigade optimize quantize` makes a static INT8 (QDQ) Fashion-MNIST CNN from the
demo repository's fp32 model, calibrated on Debian's dataset-fashion-mnist training images and
gated on its test images; `brigade serve` then serves both models side by side and the INT8
answers are checked against the labels and against the fp32 model's. Also: the gate refuses a
model that misses it (nothing written), and bad calibration data is a clear error.

Seconds, not minutes: 256 calibration images, 1,000 gate images, 200 served ones.
"""

import json
import os
import shutil
import struct
import subprocess
import tempfile
import urllib.request

import pytest

from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import DATASET, load_test_set

FP32_MODEL = os.path.join(DEMO_REPOSITORY, "fashion_mnist_onnx", "1", "model.onnx")
TRAIN_IMAGES = os.path.join(DATASET, "train-images-idx3-ubyte.gz")
TEST_IMAGES = os.path.join(DATASET, "t10k-images-idx3-ubyte.gz")
TEST_LABELS = os.path.join(DATASET, "t10k-labels-idx1-ubyte.gz")


def quantize(output, *extra):
    args = [BRIGADE_BIN, "optimize", "quantize", FP32_MODEL, "-o", output,
            "--calibration", TRAIN_IMAGES, "--calibration-samples", "256",
            "--eval", TEST_IMAGES, "--eval-labels", TEST_LABELS, "--eval-samples", "1000",
            "--time-iterations", "5", *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def add_model(repository, name, model_path):
    """Copies the fp32 demo model's config under `name`, with `model_path` as version 1."""
    with open(os.path.join(DEMO_REPOSITORY, "fashion_mnist_onnx", "config.pbtxt")) as f:
        config = f.read().replace('name: "fashion_mnist_onnx"', f'name: "{name}"')
    os.makedirs(os.path.join(repository, name, "1"))
    with open(os.path.join(repository, name, "config.pbtxt"), "w") as f:
        f.write(config)
    shutil.copy(os.path.join(DEMO_REPOSITORY, "fashion_mnist_onnx", "labels.txt"),
                os.path.join(repository, name, "labels.txt"))
    shutil.copy(model_path, os.path.join(repository, name, "1", "model.onnx"))


def top1(server, model, images):
    body = {"inputs": [{"name": "image", "shape": [len(images), 1, 28, 28], "datatype": "FP32",
                        "data": [v for image in images for v in image]}]}
    request = urllib.request.Request(f"{server.http_url}/v2/models/{model}/infer",
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        logits = json.load(r)["outputs"][0]["data"]
    return [max(range(10), key=lambda k: logits[i * 10 + k]) for i in range(len(images))]


@pytest.fixture(scope="module")
def workdir():
    path = tempfile.mkdtemp(prefix="brigade-optimize-e2e-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def int8_report(workdir):
    output = os.path.join(workdir, "int8.onnx")
    result = quantize(output, "--json")
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    report["path"] = output
    return report


def test_static_int8_passes_the_gate_and_is_smaller(int8_report):
    assert int8_report["written"] and int8_report["gate_passed"]
    assert int8_report["quantized_layers"] == 4  # two Conv, two Gemm
    assert int8_report["drop_points"] <= 1.0
    assert int8_report["int8_top1"] >= 0.88
    assert int8_report["top1_agreement"] >= 0.98
    assert int8_report["int8_bytes"] * 3 < int8_report["fp32_bytes"]
    assert os.path.getsize(int8_report["path"]) == int8_report["int8_bytes"]


def test_served_int8_model_answers_like_fp32(int8_report, workdir):
    repository = os.path.join(workdir, "repository")
    add_model(repository, "fashion_mnist_fp32", FP32_MODEL)
    add_model(repository, "fashion_mnist_int8", int8_report["path"])
    images, labels = load_test_set(200)
    with BrigadeProcess(model_repository=repository) as server:
        int8, fp32 = [], []
        for start in range(0, len(images), 25):
            batch = images[start:start + 25]
            int8 += top1(server, "fashion_mnist_int8", batch)
            fp32 += top1(server, "fashion_mnist_fp32", batch)
    accuracy = sum(p == y for p, y in zip(int8, labels)) / len(labels)
    agreement = sum(a == b for a, b in zip(int8, fp32)) / len(labels)
    assert accuracy >= 0.85, accuracy
    assert agreement >= 0.97, agreement


def test_gate_miss_writes_nothing(workdir):
    output = os.path.join(workdir, "refused.onnx")
    result = quantize(output, "--max-accuracy-drop", "-1")
    assert result.returncode == 2, result.stderr + result.stdout
    assert "gate        FAILED" in result.stdout
    assert not os.path.exists(output)
    assert not [f for f in os.listdir(workdir) if ".tmp" in f]


def test_empty_calibration_set_is_a_clear_error(workdir):
    empty = os.path.join(workdir, "empty-idx3-ubyte")
    with open(empty, "wb") as f:
        f.write(struct.pack(">IIII", 0x00000803, 0, 28, 28))
    output = os.path.join(workdir, "never.onnx")
    args = [BRIGADE_BIN, "optimize", "quantize", FP32_MODEL, "-o", output, "--calibration", empty]
    result = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "--calibration" in result.stderr and empty in result.stderr
    assert "no samples" in result.stderr
    assert not os.path.exists(output)
