"""End to end: an optimized variant goes through `brigade analyze`'s sweep. `brigade optimize
quantize --register` makes a static INT8 copy of the demo Fashion-MNIST CNN (calibrated on
Debian's dataset-fashion-mnist training images) and registers it as a new model beside the fp32
one in a copy of the repository; `brigade analyze` then sweeps both variants on real servers with
the labelled test images, and the INT8 variant must be in its table, points and Pareto data with
its own measured accuracy, close to the fp32 model's.

Seconds, not minutes: 256 calibration images, 500 gate and accuracy images, one configuration
per variant, one load level of 0.5 s (~15 s on the shared 2-core VM).
"""

import json
import os
import shutil
import subprocess
import tempfile

import pytest

from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY
from fashion_mnist import DATASET

TEST_IMAGES = os.path.join(DATASET, "t10k-images-idx3-ubyte.gz")
TEST_LABELS = os.path.join(DATASET, "t10k-labels-idx1-ubyte.gz")
FP32 = "fashion_mnist_onnx"
INT8 = "fashion_mnist_int8"


@pytest.fixture(scope="module")
def workdir():
    path = tempfile.mkdtemp(prefix="brigade-optimize-analyze-e2e-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def repository(workdir):
    """A copy of the demo's fp32 model with the INT8 variant registered beside it."""
    repo = os.path.join(workdir, "repository")
    os.makedirs(repo)
    shutil.copytree(os.path.join(DEMO_REPOSITORY, FP32), os.path.join(repo, FP32))
    # No timing: registration refuses a variant measured slower than fp32 (without --force), and
    # at ~20 us per image that is noise on a shared machine; the sweep measures the speed.
    args = [BRIGADE_BIN, "optimize", "quantize", os.path.join(repo, FP32, "1", "model.onnx"),
            "-o", os.path.join(workdir, "int8.onnx"),
            "--calibration", os.path.join(DATASET, "train-images-idx3-ubyte.gz"),
            "--calibration-samples", "256", "--eval", TEST_IMAGES, "--eval-labels", TEST_LABELS,
            "--eval-samples", "500", "--time-iterations", "0", "--threads", "1",
            "--register", repo, "--register-name", INT8, "--json"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    assert report["written"] and report["gate_passed"], report
    assert report["registered"]["version"] == 1, report
    assert os.path.exists(os.path.join(repo, INT8, "1", "model.onnx"))
    return repo


@pytest.fixture(scope="module")
def analysis(repository, workdir):
    out = os.path.join(workdir, "analysis")
    args = [BRIGADE_BIN, "analyze", os.path.join(repository, FP32), os.path.join(repository, INT8),
            "--eval-inputs", TEST_IMAGES, "--eval-labels", TEST_LABELS, "--eval-limit", "500",
            "--max-batch", "1", "--batching", "none", "--concurrency", "1",
            "--warmup-s", "0.2", "--duration-s", "0.5", "--load-samples", "16",
            # Loose: this checks the pipeline, not the machine's speed.
            "--slo-p99-ms", "1000", "--max-accuracy-drop", "0.05", "-o", out, "--no-progress",
            "--serve-arg=--pin-threads=false"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr + result.stdout
    with open(os.path.join(out, "analysis.json")) as f:
        data = json.load(f)
    data["stdout"] = result.stdout
    return data


def test_int8_variant_is_measured_with_its_accuracy(analysis):
    variants = {v["name"]: v for v in analysis["variants"]}
    assert set(variants) == {FP32, INT8}
    for v in variants.values():
        assert v["error"] == "" and v["examples"] == 500, v
    # Static INT8 of this CNN loses at most a few tenths of a point (bench/results/optimize.md).
    assert variants[INT8]["accuracy"] >= 0.85
    assert abs(variants[INT8]["accuracy"] - variants[FP32]["accuracy"]) <= 0.02
    points = [p for p in analysis["points"] if p["variant"] == INT8]
    assert points and all(p["error"] == "" and p["ok"] > 0 for p in points), points
    assert all(p["accuracy"] == variants[INT8]["accuracy"] for p in points)


def test_int8_variant_is_in_the_pareto_table(analysis):
    # The frontier is computed over both variants' points, and the printed table lists the INT8
    # rows with their accuracy.
    assert analysis["frontier"], analysis["frontier"]
    assert {analysis["points"][i]["variant"] for i in analysis["frontier"]} <= {FP32, INT8}
    accuracy = next(v["accuracy"] for v in analysis["variants"] if v["name"] == INT8)
    rows = [line for line in analysis["stdout"].splitlines() if f" {INT8} " in line]
    assert rows, analysis["stdout"]
    assert all(f"{accuracy * 100:.2f}%" in line for line in rows), rows
    assert analysis["recommendation"]["status"] == "chosen", analysis["recommendation"]
