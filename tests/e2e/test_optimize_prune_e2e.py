"""End to end: `brigade optimize prune` cuts a quarter of the demo Fashion-MNIST CNN's channels
with the torch recipe (scripts/optimize/prune.py, Debian's python3-torch), fine-tunes it, gates
it on the engine against the fp32 model and writes ONNX and TorchScript; the files really have
fewer channels, and `brigade serve` serves both (the ONNX engine and the TorchScript backend);
with --register the model lands in a repository with its measurements in its config, served.
Also: the gate refuses a 75% cut without fine-tuning (nothing written), `brigade optimize
distill` writes a narrower student, a Python without torch and bad flags are clear errors.

Seconds of training, not minutes: 6,000 training images, one or two epochs; 1,000 gate images.
"""

import json
import os
import shutil
import subprocess
import tempfile
import urllib.request

import onnx
import pytest

from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import DATASET, load_test_set

FP32_MODEL = os.path.join(DEMO_REPOSITORY, "fashion_mnist_onnx", "1", "model.onnx")
TRAIN = ["--train", os.path.join(DATASET, "train-images-idx3-ubyte.gz"),
         "--train-labels", os.path.join(DATASET, "train-labels-idx1-ubyte.gz")]
EVAL = ["--eval", os.path.join(DATASET, "t10k-images-idx3-ubyte.gz"),
        "--eval-labels", os.path.join(DATASET, "t10k-labels-idx1-ubyte.gz"),
        "--eval-samples", "1000"]


def optimize(verb, output, *extra):
    timing = [] if "--time-iterations" in extra else ["--time-iterations", "5"]
    args = [BRIGADE_BIN, "optimize", verb, FP32_MODEL, "-o", output, *TRAIN, *EVAL, *timing,
            "--quiet", *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def conv_and_gemm_widths(path):
    """Output channels of each Conv and features of each Gemm, read with the onnx package."""
    model = onnx.load(path)
    shapes = {i.name: list(i.dims) for i in model.graph.initializer}
    return [shapes[n.input[1]][0] for n in model.graph.node if n.op_type in ("Conv", "Gemm")]


def add_model(repository, name, source_model, model_file):
    with open(os.path.join(DEMO_REPOSITORY, source_model, "config.pbtxt")) as f:
        config = f.read().replace(f'name: "{source_model}"', f'name: "{name}"')
    os.makedirs(os.path.join(repository, name, "1"))
    with open(os.path.join(repository, name, "config.pbtxt"), "w") as f:
        f.write(config)
    shutil.copy(os.path.join(DEMO_REPOSITORY, source_model, "labels.txt"),
                os.path.join(repository, name, "labels.txt"))
    shutil.copy(model_file, os.path.join(repository, name, "1", os.path.basename(model_file)
                                         .replace("pruned", "model")))


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
    path = tempfile.mkdtemp(prefix="brigade-prune-e2e-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def pruned(workdir):
    output = os.path.join(workdir, "pruned.onnx")
    result = optimize("prune", output, "--ratio", "0.25", "--train-samples", "6000",
                      "--finetune-epochs", "1", "--max-accuracy-drop", "6",
                      "--torchscript", os.path.join(workdir, "pruned.pt"), "--json")
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    report["path"] = output
    return report


def test_pruned_model_has_fewer_channels_and_passes_the_gate(pruned, workdir):
    assert pruned["written"] and pruned["gate_passed"]
    assert pruned["drop_points"] <= 6
    before = conv_and_gemm_widths(FP32_MODEL)
    after = conv_and_gemm_widths(pruned["path"])
    assert before == [16, 32, 64, 10]
    assert after == [12, 24, 48, 10]  # a quarter of each hidden layer's channels, not the classes
    assert [w["candidate"] for w in pruned["widths"]] == after
    assert pruned["candidate_parameters"] < pruned["fp32_parameters"] * 0.65
    assert os.path.getsize(pruned["path"]) < os.path.getsize(FP32_MODEL) * 0.65
    assert [t["batch"] for t in pruned["timings"]] == [1, 8]
    assert os.path.getsize(os.path.join(workdir, "pruned.pt")) > 0
    assert not [f for f in os.listdir(workdir) if f.startswith(".")]


def test_served_pruned_model_answers_from_both_formats(pruned, workdir):
    repository = os.path.join(workdir, "repository")
    add_model(repository, "pruned_onnx", "fashion_mnist_onnx", pruned["path"])
    add_model(repository, "pruned_torchscript", "fashion_mnist",
              os.path.join(workdir, "pruned.pt"))
    images, labels = load_test_set(200)
    with BrigadeProcess(model_repository=repository) as server:
        from_onnx, from_torchscript = [], []
        for start in range(0, len(images), 25):
            batch = images[start:start + 25]
            from_onnx += top1(server, "pruned_onnx", batch)
            from_torchscript += top1(server, "pruned_torchscript", batch)
    accuracy = sum(p == y for p, y in zip(from_onnx, labels)) / len(labels)
    # The gate measured the same model on 1,000 images; 200 served ones land near it.
    assert accuracy >= pruned["candidate_top1"] - 0.06, accuracy
    agreement = sum(a == b for a, b in zip(from_onnx, from_torchscript)) / len(labels)
    assert agreement >= 0.99, agreement


def test_registered_variant_is_served_with_its_measurements(workdir):
    repository = os.path.join(workdir, "registry")
    os.makedirs(repository)
    output = os.path.join(workdir, "fm_pruned.onnx")
    # No timing: a variant that is not faster than fp32 is only registered with --force, and
    # at 40 us a run, one that is faster may not measure so on a busy machine.
    result = optimize("prune", output, "--ratio", "0.25", "--train-samples", "3000",
                      "--max-accuracy-drop", "10", "--time-iterations", "0",
                      "--register", repository, "--json")
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    assert report["registered"]["version"] == 1 and report["registered"]["new_model"]
    assert os.listdir(repository) == ["fm_pruned"]  # -o's name; no assembly folder left
    with open(os.path.join(repository, "fm_pruned", "config.pbtxt")) as f:
        config = f.read()
    assert 'name: "fm_pruned"' in config and 'platform: "onnxruntime_onnx"' in config
    assert ('key: "brigade_optimize.accuracy_top1"\n  value { string_value: '
            f'"{report["candidate_top1"]:.4f}" }}') in config
    assert 'string_value: "prune --ratio 0.25' in config
    images, labels = load_test_set(100)
    with BrigadeProcess(model_repository=repository) as server:
        predictions = []
        for start in range(0, len(images), 25):
            predictions += top1(server, "fm_pruned", images[start:start + 25])
    accuracy = sum(p == y for p, y in zip(predictions, labels)) / len(labels)
    assert accuracy >= report["candidate_top1"] - 0.08, accuracy


def test_gate_refuses_a_large_cut_without_fine_tuning(workdir):
    output = os.path.join(workdir, "refused.onnx")
    args = ["--ratio", "0.75", "--finetune-epochs", "0", "--train-samples", "500",
            "--torchscript", os.path.join(workdir, "refused.pt")]
    result = optimize("prune", output, *args)
    assert result.returncode == 2, result.stderr + result.stdout
    assert "gate        FAILED (max drop 1.00 points)" in result.stdout
    assert "output      not written" in result.stdout
    assert not os.path.exists(output)
    assert not os.path.exists(os.path.join(workdir, "refused.pt"))
    assert not [f for f in os.listdir(workdir) if f.startswith(".")]
    # The cut went in two steps, neither removing more than half of any layer's channels.
    report = json.loads(optimize("prune", output, *args, "--json").stdout)
    assert [s["widths"] for s in report["recipe"]["steps"]] == [[8, 16, 32, 10], [4, 8, 16, 10]]
    assert report["drop_points"] > 1 and not report["written"]


def test_channel_multiple_rounds_kept_widths_down(workdir):
    output = os.path.join(workdir, "blocks.onnx")
    result = optimize("prune", output, "--ratio", "0.25", "--channel-multiple", "16",
                      "--finetune-epochs", "0", "--train-samples", "500",
                      "--max-accuracy-drop", "100", "--time-iterations", "0", "--json")
    assert result.returncode == 0, result.stderr + result.stdout
    # conv1 (16, no wider than one block) keeps its width, 24 of 32 rounds down to 16, 48 of 64
    # is a multiple already; the classes are never cut.
    assert conv_and_gemm_widths(output) == [16, 16, 48, 10]


def test_distilled_student_is_narrower(workdir):
    output = os.path.join(workdir, "student.onnx")
    result = optimize("distill", output, "--width", "0.25", "--epochs", "2",
                      "--train-samples", "6000", "--max-accuracy-drop", "100", "--json")
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    assert report["written"]
    assert conv_and_gemm_widths(output) == [4, 8, 16, 10]
    assert report["recipe"]["alpha"] == 0.7 and report["recipe"]["temperature"] == 4.0
    # Two epochs on 6,000 images (73% when written): far from the teacher, far above chance.
    assert report["candidate_top1"] > 0.5


def test_python_without_torch_is_a_clear_error(workdir):
    # Debian's python3 without its site packages: no torch, numpy or onnx to import.
    python = os.path.join(workdir, "python-without-torch")
    with open(python, "w") as f:
        f.write('#!/bin/sh\nPYTHONHASHSEED=0 exec /usr/bin/python3 -S "$@"\n')
    os.chmod(python, 0o755)
    output = os.path.join(workdir, "never.onnx")
    result = optimize("prune", output, "--ratio", "0.5", "--python", python)
    assert result.returncode == 1
    assert "python3-torch" in result.stderr and "apt-get install" in result.stderr
    assert not os.path.exists(output)

    result = optimize("prune", output, "--ratio", "0.5", "--python", "/nonexistent/python3")
    assert result.returncode == 1
    assert "--python: cannot run '/nonexistent/python3'" in result.stderr


def test_bad_flags_name_the_flag(workdir):
    output = os.path.join(workdir, "never.onnx")
    result = optimize("prune", output, "--ratio", "1.5")
    assert result.returncode != 0 and "--ratio" in result.stderr
    result = optimize("distill", output, "--width", "0")
    assert result.returncode != 0 and "--width" in result.stderr
    args = [BRIGADE_BIN, "optimize", "prune", FP32_MODEL, "-o", output, "--ratio", "0.5",
            "--train", "/nonexistent/images", "--train-labels", TRAIN[3], *EVAL]
    result = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "--train: cannot read '/nonexistent/images'" in result.stderr
    assert not os.path.exists(output)
