"""End-to-end tests of the demo repository's image pipelines (models/): encoded images in, class
names out, pre- and post-processing in the server.

  fashion_mnist_png   PNG -> fashion_mnist_png_decode -> fashion_mnist_onnx -> fashion_mnist_label
  imagenet_classify   JPEG -> imagenet_preprocess -> imagenet_resnet18 (random weights) ->
                      imagenet_top5

Each answer is checked against the same server's classifier fed the reference tensor (the
dataset's own pixels; torchvision's transforms of the photo), so the test says the in-server
pre-processing is the reference's. Clients: urllib for HTTP (KServe v2 binary tensor extension),
grpcio for gRPC; PIL and torchvision (Debian's python3-pil, python3-torchvision) encode and
reference the images.
"""

import io
import json
import os
import shutil
import struct
import tempfile
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest
from PIL import Image

import grpc_client_test
from brigade_process import DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import load_test_set

PHOTO = "/usr/share/doc/opencv-doc/examples/data/fruits.jpg"  # Debian's opencv-doc
with open(os.path.join(DEMO_REPOSITORY, "fashion_mnist_label", "1", "labels.txt")) as f:
    FASHION_LABELS = f.read().splitlines()


@pytest.fixture(scope="module")
def server():
    if not os.path.exists(os.path.join(DEMO_REPOSITORY, "imagenet_resnet18", "1", "model.onnx")):
        pytest.fail("models/imagenet_resnet18/1/model.onnx is missing: run scripts/setup "
                    "(or /usr/bin/python3 scripts/make_demo_models.py)")
    with BrigadeProcess() as process:
        yield process


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-demo-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


def post(server, model, header, raw=b""):
    """POSTs a KServe v2 request (JSON header + binary tensors); returns (status, JSON, raw)."""
    head = json.dumps(header).encode()
    request = urllib.request.Request(
        f"{server.http_url}/v2/models/{model}/infer", data=head + raw, method="POST",
        headers={"Content-Type": "application/octet-stream",
                 "Inference-Header-Content-Length": str(len(head))})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            body = response.read()
            length = int(response.headers.get("Inference-Header-Content-Length", len(body)))
            return response.status, json.loads(body[:length]), body[length:]
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), b""


def infer_images(server, model, images, outputs):
    """Sends `images` as the BYTES input IMAGE [n, 1]; returns {output: JSON data}."""
    raw = b"".join(struct.pack("<I", len(image)) + image for image in images)
    header = {"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [len(images), 1],
                          "parameters": {"binary_data_size": len(raw)}}],
              "outputs": [{"name": name} for name in outputs]}
    status, body, _ = post(server, model, header, raw)
    assert status == 200, body
    return {output["name"]: output for output in body["outputs"]}


def infer_tensor(server, model, name, array):
    """Sends one FP32 tensor as JSON; returns the first output's values as a numpy array."""
    header = {"inputs": [{"name": name, "datatype": "FP32", "shape": list(array.shape),
                          "data": array.ravel().tolist()}]}
    status, body, _ = post(server, model, header)
    assert status == 200, body
    output = body["outputs"][0]
    return np.array(output["data"], dtype=np.float32).reshape(output["shape"])


def png(pixels):
    buffer = io.BytesIO()
    Image.fromarray(pixels.astype(np.uint8), mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def softmax(logits):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_png_images_get_the_label_the_classifier_gives_the_datasets_pixels(server):
    pictures, labels = load_test_set(96)
    pixels = np.array(pictures, dtype=np.float32).reshape(-1, 1, 28, 28)
    images = [png(np.rint(image[0] * 255)) for image in pixels]
    answers = {}
    for start in range(0, len(images), 32):  # max_batch_size
        batch = infer_images(server, "fashion_mnist_png", images[start:start + 32],
                             ["LABEL", "PROBABILITY", "CLASS"])
        for name, output in batch.items():
            answers.setdefault(name, []).extend(output["data"])
    reference = np.concatenate([infer_tensor(server, "fashion_mnist_onnx", "image",
                                             pixels[start:start + 32])
                                for start in range(0, len(pixels), 32)])
    want = reference.argmax(axis=1)
    assert answers["CLASS"] == want.tolist()
    assert answers["LABEL"] == [FASHION_LABELS[k] for k in want]
    np.testing.assert_allclose(answers["PROBABILITY"], softmax(reference).max(axis=1),
                               rtol=1e-5, atol=1e-6)
    accuracy = np.mean(want == np.array(labels))
    print(f"fashion_mnist_png: {accuracy:.1%} of {len(labels)} test images right")
    assert accuracy > 0.8


def test_the_png_pipeline_answers_over_grpc(server, stubs):
    pb, stub_module = stubs
    pictures, _ = load_test_set(3)
    images = [png(np.rint(np.array(p, dtype=np.float32).reshape(28, 28) * 255)) for p in pictures]
    request = pb.ModelInferRequest(model_name="fashion_mnist_png")
    tensor = request.inputs.add(name="IMAGE", datatype="BYTES")
    tensor.shape.extend([len(images), 1])
    tensor.contents.bytes_contents.extend(images)
    request.outputs.add(name="LABEL")
    with grpc.insecure_channel(server.grpc_target) as channel:
        response = stub_module.GRPCInferenceServiceStub(channel).ModelInfer(request, timeout=60)
    assert response.outputs[0].name == "LABEL" and response.outputs[0].datatype == "BYTES"
    raw = response.raw_output_contents[0]
    names, offset = [], 0
    while offset < len(raw):
        (length,) = struct.unpack_from("<I", raw, offset)
        names.append(raw[offset + 4:offset + 4 + length].decode())
        offset += 4 + length
    http = infer_images(server, "fashion_mnist_png", images, ["LABEL"])["LABEL"]["data"]
    assert names == http and all(name in FASHION_LABELS for name in names)


def test_a_photo_gets_the_top5_of_the_classifier_fed_torchvisions_tensor(server):
    import torchvision.transforms as T  # python3-torchvision
    with open(PHOTO, "rb") as f:
        jpeg = f.read()
    answer = infer_images(server, "imagenet_classify", [jpeg],
                          ["LABELS", "PROBABILITIES", "CLASSES"])
    transform = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                           T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    tensor = transform(Image.open(PHOTO).convert("RGB")).numpy()[np.newaxis]
    logits = infer_tensor(server, "imagenet_resnet18", "input", tensor)[0]
    probabilities = softmax(logits)
    top5 = np.argsort(-probabilities, kind="stable")[:5]
    assert answer["CLASSES"]["data"] == top5.tolist()
    assert answer["CLASSES"]["shape"] == [1, 5]
    np.testing.assert_allclose(answer["PROBABILITIES"]["data"], probabilities[top5], rtol=1e-5)
    with open(os.path.join(DEMO_REPOSITORY, "imagenet_top5", "1", "labels.txt")) as f:
        names = f.read().splitlines()
    assert answer["LABELS"]["data"] == [names[k] for k in top5]


def test_a_corrupt_png_fails_its_request_naming_the_batch_index(server):
    good = png(np.zeros((28, 28)))
    raw = b"".join(struct.pack("<I", len(image)) + image for image in (good, good[:40]))
    header = {"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [2, 1],
                          "parameters": {"binary_data_size": len(raw)}}]}
    status, body, _ = post(server, "fashion_mnist_png", header, raw)
    assert status == 400
    assert "input 'IMAGE' batch index 1: PNG" in body["error"], body
    # The server goes on answering.
    assert infer_images(server, "fashion_mnist_png", [good], ["CLASS"])["CLASS"]["data"]


def binary_outputs(header, raw):
    """{name: bytes} of the binary outputs of a response, in the order the header lists them."""
    outputs, offset = {}, 0
    for output in header["outputs"]:
        size = output["parameters"]["binary_data_size"]
        outputs[output["name"]] = raw[offset:offset + size]
        offset += size
    assert offset == len(raw)
    return outputs


def test_a_raw_binary_request_is_the_png_itself(server):
    """Triton's raw binary request (Inference-Header-Content-Length: 0): `curl --data-binary
    @shirt.png` with no JSON at all; the answer's outputs are all binary."""
    pictures, labels = load_test_set(1)
    image = png(np.rint(np.array(pictures[0]).reshape(28, 28) * 255))
    request = urllib.request.Request(
        f"{server.http_url}/v2/models/fashion_mnist_png/infer", data=image, method="POST",
        headers={"Inference-Header-Content-Length": "0"})
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
        length = int(response.headers["Inference-Header-Content-Length"])
    header = json.loads(body[:length])
    outputs = binary_outputs(header, body[length:])
    (size,) = struct.unpack_from("<I", outputs["LABEL"])
    label = outputs["LABEL"][4:4 + size].decode()
    assert label == infer_images(server, "fashion_mnist_png", [image], ["LABEL"])["LABEL"]["data"][0]
    assert label == FASHION_LABELS[labels[0]]  # the first test image is an ankle boot
    (probability,) = struct.unpack("<f", outputs["PROBABILITY"])
    assert 0 < probability <= 1

    # A numeric input takes the raw little-endian elements, the shape deduced from the size.
    pixels = np.array(pictures[0], dtype="<f4")
    request = urllib.request.Request(
        f"{server.http_url}/v2/models/fashion_mnist_onnx/infer", data=pixels.tobytes(),
        method="POST", headers={"Inference-Header-Content-Length": "0"})
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
        length = int(response.headers["Inference-Header-Content-Length"])
    logits = np.frombuffer(binary_outputs(json.loads(body[:length]), body[length:])["logits"],
                           dtype="<f4")
    assert int(logits.argmax()) == labels[0]
    request = urllib.request.Request(
        f"{server.http_url}/v2/models/fashion_mnist_onnx/infer", data=pixels.tobytes()[:3000],
        method="POST", headers={"Inference-Header-Content-Length": "0"})
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=60)
    assert error.value.code == 400
    assert "raw binary request for input 'image'" in json.loads(error.value.read())["error"]


def test_the_classification_extension_names_the_top_classes_over_http_and_grpc(server, stubs):
    pictures, _ = load_test_set(2)
    pixels = np.array(pictures, dtype=np.float32).reshape(2, 1, 28, 28)
    logits = infer_tensor(server, "fashion_mnist_onnx", "image", pixels)
    want = []
    for row in logits:
        top = np.argsort(-row, kind="stable")[:3]
        want.append([(float(row[k]), int(k), FASHION_LABELS[k]) for k in top])

    def parse(entries):
        out = []
        for entry in entries:
            value, index, label = entry.split(":", 2)
            out.append((float(value), int(index), label))
        return out

    header = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [2, 1, 28, 28],
                          "data": pixels.ravel().tolist()}],
              "outputs": [{"name": "logits", "parameters": {"classification": 3}}]}
    status, body, _ = post(server, "fashion_mnist_onnx", header)
    assert status == 200, body
    output = body["outputs"][0]
    assert output["datatype"] == "BYTES" and output["shape"] == [2, 3]
    got = parse(output["data"])
    for row in range(2):
        for (value, index, label), (w_value, w_index, w_label) in zip(got[row * 3:row * 3 + 3],
                                                                     want[row]):
            assert (index, label) == (w_index, w_label)
            assert value == pytest.approx(w_value, abs=1e-5)

    pb, stub_module = stubs
    request = pb.ModelInferRequest(model_name="fashion_mnist_onnx")
    tensor = request.inputs.add(name="image", datatype="FP32")
    tensor.shape.extend([2, 1, 28, 28])
    request.raw_input_contents.append(pixels.astype("<f4").tobytes())
    requested = request.outputs.add(name="logits")
    requested.parameters["classification"].int64_param = 3  # tritonclient's class_count
    with grpc.insecure_channel(server.grpc_target) as channel:
        response = stub_module.GRPCInferenceServiceStub(channel).ModelInfer(request, timeout=60)
    raw, entries, offset = response.raw_output_contents[0], [], 0
    while offset < len(raw):
        (length,) = struct.unpack_from("<I", raw, offset)
        entries.append(raw[offset + 4:offset + 4 + length].decode())
        offset += 4 + length
    assert entries == output["data"]

    header["outputs"][0]["parameters"]["classification"] = "three"
    status, body, _ = post(server, "fashion_mnist_onnx", header)
    assert status == 400
    assert "output 'logits': parameter classification must be a positive integer" in body["error"]
    status, body, _ = post(server, "fashion_mnist_png", {
        "inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1, 1], "data": ["x"]}],
        "outputs": [{"name": "LABEL", "parameters": {"classification": 1}}]})
    assert status == 400 and "classification needs a numeric output" in body["error"]


def stage_mean_seconds(server, model, stage):
    """Mean of brigade_request_stage_duration_seconds for one model and stage, from /metrics."""
    with urllib.request.urlopen(server.http_url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    values = {}
    for line in text.splitlines():
        for kind in ("sum", "count"):
            prefix = f"brigade_request_stage_duration_seconds_{kind}{{model=\"{model}\","
            if line.startswith(prefix) and f'stage="{stage}"' in line:
                values[kind] = values.get(kind, 0.0) + float(line.rsplit(" ", 1)[1])
    return values["sum"] / values["count"]


def test_steps_attached_to_the_model_answer_as_the_ensemble_and_show_in_t1_and_t4(server):
    pictures, _ = load_test_set(32)
    images = [png(np.rint(np.array(p).reshape(28, 28) * 255)) for p in pictures]
    outputs = ["LABEL", "PROBABILITY", "CLASS"]
    attached = infer_images(server, "fashion_mnist_attached", images, outputs)
    ensemble = infer_images(server, "fashion_mnist_png", images, outputs)
    for name in outputs:
        assert attached[name]["data"] == ensemble[name]["data"], name
        assert attached[name]["shape"] == [32, 1]
    # The clients see the steps' tensors, not the model's.
    with urllib.request.urlopen(server.http_url + "/v2/models/fashion_mnist_attached") as r:
        metadata = json.loads(r.read())
    assert [t["name"] for t in metadata["inputs"]] == ["IMAGE"]
    assert [t["name"] for t in metadata["outputs"]] == ["PROBABILITY", "CLASS", "LABEL"]
    # A 2000x2000 PNG takes milliseconds to decode and shrink: t0 -> t1 shows it, where the
    # plain model's validation alone takes microseconds.
    big = np.kron(np.rint(np.array(pictures[0]).reshape(28, 28) * 255),
                  np.ones((72, 72))).astype(np.uint8)[:2000, :2000]
    for _ in range(5):
        infer_images(server, "fashion_mnist_attached", [png(big)], ["LABEL"])
    infer_tensor(server, "fashion_mnist_onnx", "image",
                 np.array(pictures[:4], dtype=np.float32).reshape(4, 1, 28, 28))
    attached_pre = stage_mean_seconds(server, "fashion_mnist_attached", "preprocess")
    plain_pre = stage_mean_seconds(server, "fashion_mnist_onnx", "preprocess")
    print(f"preprocess stage mean: attached {attached_pre * 1e3:.3f} ms, "
          f"plain {plain_pre * 1e3:.3f} ms")
    assert attached_pre > 5 * plain_pre
    assert stage_mean_seconds(server, "fashion_mnist_attached", "postprocess") > 0


def test_the_slo_router_serves_the_accurate_variant_while_it_is_in_time(server):
    pictures, _ = load_test_set(1)
    data = np.array(pictures[0], dtype=np.float32).tolist()

    def ask(parameters):
        header = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                              "data": data}], "parameters": parameters}
        status, body, _ = post(server, "fashion_mnist_slo", header)
        assert status == 200, body
        return body

    # A 10 s timeout is the deadline (instead of the router's 5 ms target, which a loaded test
    # machine's CNN can miss): every request is in time on the CNN, the most accurate variant.
    for _ in range(20):
        body = ask({"timeout": 10_000_000})
        assert body["model_name"] == "fashion_mnist_slo"
        assert body["parameters"]["routed_to"] == "fashion_mnist:1"
    assert ask({"urgent": True})["parameters"]["routed_to"] == "fashion_mnist_small:1"
    with urllib.request.urlopen(server.http_url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    assert ('brigade_route_decisions_total{model="fashion_mnist_slo",version="1",'
            'variant="cnn",reason="slo"} 20') in text
