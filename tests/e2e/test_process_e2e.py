"""End-to-end tests of the brigade_process backend: encoded images as a BYTES input over HTTP's
binary tensor extension, pre-processed in the server, compared with the unit tests' reference
(src/process/testdata, written by torchvision) and with torchvision itself on a real photo; and
the top-k post-processing step. urllib is the client."""

import io
import json
import os
import shutil
import struct
import tempfile
import urllib.error
import urllib.request

import numpy as np
import pytest

from brigade_process import BrigadeProcess, ROOT

TESTDATA = os.path.join(ROOT, "src", "process", "testdata")
PHOTO = "/usr/share/doc/opencv-doc/examples/data/fruits.jpg"  # Debian's opencv-doc

PREPROCESS_SMALL = """
name: "pre_small"
backend: "brigade_process"
max_batch_size: 4
parameters { key: "step" value { string_value: "image_classify_preprocess" } }
parameters { key: "size" value { string_value: "24" } }
parameters { key: "crop" value { string_value: "20" } }
input [ { name: "IMAGE" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "PIXELS" data_type: TYPE_FP32 dims: [ 3, 20, 20 ] } ]
"""

PREPROCESS_IMAGENET = """
name: "pre_imagenet"
platform: "brigade_process"
max_batch_size: 2
parameters { key: "step" value { string_value: "image_classify_preprocess" } }
parameters { key: "mode" value { string_value: "exact" } }
input [ { name: "IMAGE" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "PIXELS" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] } ]
"""

TOP_K = """
name: "top3"
backend: "brigade_process"
max_batch_size: 8
parameters { key: "step" value { string_value: "top_k" } }
parameters { key: "k" value { string_value: "3" } }
parameters { key: "softmax" value { string_value: "true" } }
input [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 5 ] } ]
output [ { name: "SCORES" data_type: TYPE_FP32 dims: [ 3 ] },
         { name: "CLASSES" data_type: TYPE_INT64 dims: [ 3 ] } ]
"""


def read(name):
    with open(os.path.join(TESTDATA, name), "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="brigade-process-repo-")
    for config in (PREPROCESS_SMALL, PREPROCESS_IMAGENET, TOP_K):
        name = config.split('"')[1]
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(config)
    try:
        with BrigadeProcess(model_repository=repo) as process:
            yield process
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def infer_images(server, model, images, output="PIXELS"):
    """POSTs `images` as one BYTES input [n, 1] in binary form; returns (status, JSON, raw)."""
    raw = b"".join(struct.pack("<I", len(image)) + image for image in images)
    header = json.dumps({
        "inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [len(images), 1],
                    "parameters": {"binary_data_size": len(raw)}}],
        "outputs": [{"name": output, "parameters": {"binary_data": True}}]}).encode()
    request = urllib.request.Request(
        f"{server.http_url}/v2/models/{model}/infer", data=header + raw, method="POST",
        headers={"Content-Type": "application/octet-stream",
                 "Inference-Header-Content-Length": str(len(header))})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            length = int(response.headers["Inference-Header-Content-Length"])
            return response.status, json.loads(body[:length]), body[length:]
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), b""


def test_jpeg_and_png_bytes_become_the_reference_tensor(server):
    status, answer, raw = infer_images(server, "pre_small",
                                       [read("rgb8.png"), read("baseline.jpg")])
    assert status == 200, answer
    output = answer["outputs"][0]
    assert output["name"] == "PIXELS" and output["datatype"] == "FP32"
    assert output["shape"] == [2, 3, 20, 20]
    assert output["parameters"]["binary_data_size"] == 2 * 3 * 20 * 20 * 4
    image_bytes = 3 * 20 * 20 * 4
    # Row 1 is baseline.jpg: torchvision's tensor, byte for byte (the unit tests' reference).
    assert raw[image_bytes:] == read("baseline.jpg.r24c20.f32")
    # Row 0 is rgb8.png: its torchvision pixels (the .rgb reference) normalised.
    pixels = np.frombuffer(read("rgb8.png.r24c20.rgb"), np.uint8).reshape(20, 20, 3)
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    want = ((pixels.astype(np.float32) / np.float32(255) - mean) / std).transpose(2, 0, 1)
    got = np.frombuffer(raw[:image_bytes], "<f4").reshape(3, 20, 20)
    np.testing.assert_array_equal(got, want)


def test_a_real_photo_matches_torchvision_exactly(server):
    import torch  # noqa: F401  (torchvision needs it loaded first)
    from PIL import Image
    from torchvision import transforms

    with open(PHOTO, "rb") as f:
        photo = f.read()
    status, answer, raw = infer_images(server, "pre_imagenet", [photo])
    assert status == 200, answer
    assert answer["outputs"][0]["shape"] == [1, 3, 224, 224]
    reference = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])(
            Image.open(io.BytesIO(photo)).convert("RGB")).numpy()
    got = np.frombuffer(raw, "<f4").reshape(3, 224, 224)
    np.testing.assert_array_equal(got, reference)


def test_a_bad_image_fails_the_request_naming_its_batch_index(server):
    jpeg = read("baseline.jpg")
    status, answer, _ = infer_images(server, "pre_small", [jpeg, jpeg[: len(jpeg) // 2]])
    assert status == 400, answer
    assert "batch index 1" in answer["error"], answer
    assert "corrupt or truncated" in answer["error"], answer
    status, answer, _ = infer_images(server, "pre_small", [b"GIF89a not an image"])
    assert status == 400 and "batch index 0: unsupported image format" in answer["error"]
    # The server is still serving the model.
    status, _, _ = infer_images(server, "pre_small", [jpeg])
    assert status == 200


def test_top_k_step_returns_softmax_scores_and_classes(server):
    logits = [[0.0, 3.0, 1.0, 2.0, -1.0], [5.0, 0.0, 0.0, 0.0, 4.0]]
    body = json.dumps({"inputs": [{"name": "LOGITS", "datatype": "FP32", "shape": [2, 5],
                                   "data": [v for row in logits for v in row]}]}).encode()
    request = urllib.request.Request(f"{server.http_url}/v2/models/top3/infer", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    outputs = {o["name"]: o for o in answer["outputs"]}
    assert outputs["CLASSES"]["datatype"] == "INT64"
    assert outputs["CLASSES"]["shape"] == [2, 3]
    assert outputs["CLASSES"]["data"] == [1, 3, 2, 0, 4, 1]
    exp = np.exp(np.array(logits[0]) - 3.0)
    assert outputs["SCORES"]["data"][0] == pytest.approx(exp[1] / exp.sum(), rel=1e-6)
