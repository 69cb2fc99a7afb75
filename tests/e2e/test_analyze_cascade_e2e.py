"""`brigade analyze cascade` against the real server on the demo cascade (fashion_mnist_cascade).

The threshold it chooses for a target accuracy on 2000 Fashion-MNIST test images is checked
against an independent computation here: the same server's logits from both classifiers (one
image per request over HTTP/JSON, as the tool is asked to send them), the cascade's rule (the
small model's top softmax probability below the threshold: the CNN answers), and the fewest
escalations that reach the target. `--write` must change only the threshold in a copy of the
router's config.pbtxt.
"""

import json
import math
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import DATASET, load_test_set
from test_http_e2e import post_json

MODELS = ("fashion_mnist_small", "fashion_mnist", "fashion_mnist_cascade")
EXAMPLES = 2000
TARGET = 0.91


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="brigade-cascade-repo-")
    for name in MODELS:
        os.symlink(os.path.join(DEMO_REPOSITORY, name), os.path.join(repo, name))
    try:
        # The demo models are linked in from the demo repository.
        with BrigadeProcess(model_repository=repo,
                            extra_args=["--allow-symlinked-models"]) as process:
            yield process
    finally:
        shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def config_copy():
    folder = os.path.join(tempfile.mkdtemp(prefix="brigade-cascade-config-"),
                          "fashion_mnist_cascade")
    os.makedirs(folder)
    path = os.path.join(folder, "config.pbtxt")
    shutil.copy(os.path.join(DEMO_REPOSITORY, "fashion_mnist_cascade", "config.pbtxt"), path)
    yield path
    shutil.rmtree(os.path.dirname(folder), ignore_errors=True)


def analyze(server, *args, limit=EXAMPLES):
    command = [BRIGADE_BIN, "analyze", "cascade", "-u", f"127.0.0.1:{server.http_port}",
               "--model", "fashion_mnist_cascade",
               "--eval-inputs", f"{DATASET}/t10k-images-idx3-ubyte.gz",
               "--eval-labels", f"{DATASET}/t10k-labels-idx1-ubyte.gz",
               "--eval-limit", str(limit), "--eval-batch", "1", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def learned(server, config_copy):
    result = analyze(server, "--target-accuracy", str(TARGET), "--format", "json",
                     "--write", config_copy)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def logits(server, model, image):
    status, _, body = post_json(f"{server.http_url}/v2/models/{model}/infer", {"inputs": [
        {"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28], "data": image}]})
    assert status == 200, body
    return json.loads(body)["outputs"][0]["data"]


def argmax(values):
    return max(range(len(values)), key=lambda k: (values[k], -k))


@pytest.fixture(scope="module")
def answers(server):
    """(small model's class, its top softmax probability, CNN's class, label) per image."""
    images, labels = load_test_set(EXAMPLES)
    out = []
    for image, label in zip(images, labels):
        small = logits(server, "fashion_mnist_small", image)
        top = max(small)
        probability = 1.0 / sum(math.exp(x - top) for x in small)
        out.append((argmax(small), probability, argmax(logits(server, "fashion_mnist", image)),
                    label))
    return out


def cascade(answers, threshold):
    """(correct, escalated) of the cascade at `threshold`, as the router decides."""
    correct = escalated = 0
    for small, probability, cnn, label in answers:
        if probability < threshold:
            escalated += 1
            correct += cnn == label
        else:
            correct += small == label
    return correct, escalated


def test_the_chosen_threshold_scores_as_the_servers_answers_say(learned, answers):
    chosen = learned["chosen"]
    assert learned["examples"] == EXAMPLES and learned["target_met"]
    correct, escalated = cascade(answers, chosen["threshold"])
    # Float-level differences between this client's softmax and the tool's may move an image
    # sitting on the threshold; no more than one.
    assert abs(correct - chosen["correct"]) <= 1
    assert abs(escalated - chosen["escalated"]) <= 1
    assert chosen["accuracy"] >= TARGET
    assert chosen["accuracy"] == pytest.approx(chosen["correct"] / EXAMPLES)
    assert learned["second"]["accuracy"] == pytest.approx(
        sum(cnn == label for _, _, cnn, label in answers) / EXAMPLES, abs=1.5 / EXAMPLES)


def test_no_threshold_escalating_fewer_reaches_the_target(learned, answers):
    # Every threshold that escalates fewer images splits as one of the scores below the chosen
    # one (or 0) does.
    chosen = learned["chosen"]["threshold"]
    for threshold in sorted({0.0} | {p for _, p, _, _ in answers if p < chosen}):
        correct, escalated = cascade(answers, threshold)
        if escalated < learned["chosen"]["escalated"] - 1:
            assert correct / EXAMPLES < TARGET, threshold


def test_write_changes_only_the_threshold(learned, config_copy):
    with open(os.path.join(DEMO_REPOSITORY, "fashion_mnist_cascade", "config.pbtxt")) as f:
        original = f.read()
    with open(config_copy) as f:
        written = f.read()
    assert learned["written"] == config_copy
    value = re.search(r"threshold:\s*([0-9.eE+-]+)", written).group(1)
    assert float(value) == learned["chosen"]["threshold"]
    served = re.search(r"threshold:\s*([0-9.]+)", original)
    assert value != served.group(1)
    assert written == original[:served.start(1)] + value + original[served.end(1):]


def test_another_models_config_is_refused_and_left_alone(server):
    path = os.path.join(DEMO_REPOSITORY, "fashion_mnist_small", "config.pbtxt")
    with open(path) as f:
        before = f.read()
    result = analyze(server, "--target-accuracy", "0.5", "--write", path, limit=50)
    assert result.returncode != 0
    assert "not of router 'fashion_mnist_cascade'" in result.stderr
    with open(path) as f:
        assert f.read() == before
