"""End-to-end tests of the HTTP/REST front end: the real binary, curl as the client."""

import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time

import pytest

from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import load_test_set


def curl(url, data=None, headers=(), method=None):
    """Runs curl; returns (status, headers dict (lower-case keys), body bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        body_path, header_path = os.path.join(tmp, "body"), os.path.join(tmp, "headers")
        args = ["curl", "-s", "-S", "-o", body_path, "-D", header_path, "-w", "%{http_code}"]
        for header in headers:
            args += ["-H", header]
        if method:
            args += ["-X", method]
        if data is not None:
            data_path = os.path.join(tmp, "data")
            with open(data_path, "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode())
            args += ["--data-binary", "@" + data_path]
        args.append(url)
        status = int(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        with open(body_path, "rb") as f:
            body = f.read()
        parsed = {}
        with open(header_path, "r", errors="replace") as f:
            for line in f.read().splitlines()[1:]:
                if ":" in line:
                    key, value = line.split(":", 1)
                    parsed[key.strip().lower()] = value.strip()
        return status, parsed, body


def post_json(url, payload):
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return curl(url, text, headers=["Content-Type: application/json"])


def binary_request(header, tensors):
    """Triton binary tensor extension: JSON header followed by raw tensor bytes."""
    head = json.dumps(header).encode()
    return head + b"".join(tensors), f"Inference-Header-Content-Length: {len(head)}"


def argmax(values):
    return max(range(len(values)), key=lambda i: values[i])


@pytest.fixture(scope="module")
def server():
    with BrigadeProcess() as process:
        yield process


@pytest.fixture(scope="module")
def images():
    return load_test_set(100)


def test_health_endpoints_answer_200(server):
    assert curl(server.http_url + "/v2/health/live")[0] == 200
    assert curl(server.http_url + "/v2/health/ready")[0] == 200


def test_server_metadata_lists_extensions(server):
    status, _, body = curl(server.http_url + "/v2")
    assert status == 200
    meta = json.loads(body)
    assert meta["name"] == "brigade"
    assert "binary_tensor_data" in meta["extensions"]


def readme_extensions():
    """The named rows of README's compatibility table: {name: "supported" | "partial" | "no"}."""
    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    with open(readme) as f:
        text = f.read()
    table = text[text.index("### Protocol compatibility"):]
    rows = {}
    for line in table.splitlines()[1:]:
        if line.startswith("#"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`[a-z_]+`", cells[1]):
            rows[cells[1].strip("`")] = cells[2]
    return rows


def test_server_metadata_extensions_agree_with_the_readme_table(server):
    rows = readme_extensions()
    assert {"sequence", "system_shared_memory", "trace", "logging"} <= rows.keys()
    listed = {name for name, support in rows.items() if support in ("supported", "partial")}
    assert set(json.loads(curl(server.http_url + "/v2")[2])["extensions"]) == listed


def test_model_metadata_describes_the_classifier(server):
    for path in ["/v2/models/fashion_mnist", "/v2/models/fashion_mnist/versions/1"]:
        status, _, body = curl(server.http_url + path)
        assert status == 200, body
        meta = json.loads(body)
        assert meta["name"] == "fashion_mnist"
        assert meta["inputs"] == [{"name": "image", "datatype": "FP32", "shape": [-1, 1, 28, 28]}]
        assert meta["outputs"][0]["name"] == "logits"
    assert curl(server.http_url + "/v2/models/fashion_mnist/ready")[0] == 200
    assert curl(server.http_url + "/v2/models/fashion_mnist/versions/1/ready")[0] == 200


def test_model_ready_of_an_unknown_model_or_version_is_tritons_400(server):
    status, _, body = curl(server.http_url + "/v2/models/no_such_model/ready")
    assert status == 400
    assert "no_such_model" in json.loads(body)["error"]
    assert curl(server.http_url + "/v2/models/fashion_mnist/versions/99/ready")[0] == 400


def test_parameters_brigade_does_not_implement_are_refused_by_name(server):
    url = server.http_url + "/v2/models/fashion_mnist/infer"
    image = {"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28], "data": [0.0] * 784}
    cases = [
        ({"parameters": {"sequence_id": 7, "sequence_start": True}, "inputs": [image]},
         "request parameter 'sequence_id'"),
        # Shared-memory parameters are implemented: test_shm_e2e.py.
        ({"parameters": {"triton_new": True}, "inputs": [image]}, "request parameter 'triton_new'"),
    ]
    for payload, fragment in cases:
        status, _, body = post_json(url, payload)
        assert status == 400, body
        assert fragment in json.loads(body)["error"]
    # What clients send when no sequence is meant is accepted, as are custom parameters.
    status, _, body = post_json(url, {"parameters": {"sequence_id": 0, "sequence_start": False,
                                                     "my_tag": "x"}, "inputs": [image]})
    assert status == 200, body


def test_logging_settings_change_at_run_time(server):
    url = server.http_url + "/v2/logging"
    status, _, body = curl(url)
    assert status == 200, body
    assert json.loads(body)["log_info"] is True
    status, _, body = post_json(url, {"log_verbose_level": 1})
    assert status == 200, body
    assert json.loads(body)["log_verbose_level"] == 1
    status, _, body = post_json(url, {"log_info": False, "log_verbose_level": 0})
    assert json.loads(body)["log_info"] is False and json.loads(curl(url)[2])["log_info"] is False
    status, _, body = post_json(url, {"log_warning": False})  # info off, warning off, error on
    assert status == 200, body
    status, _, body = post_json(url, {"log_info": True})  # info without warning: not a threshold
    assert status == 400 and "log_info with log_warning off" in json.loads(body)["error"]
    assert post_json(url, {"log_file": "/tmp/brigade.log"})[0] == 501
    status, _, body = post_json(url, {"log_info": True, "log_warning": True})
    assert status == 200 and json.loads(body)["log_info"] is True, body


def classify_json(server, batch):
    payload = {"id": "json-1", "inputs": [{"name": "image", "datatype": "FP32",
                                           "shape": [len(batch), 1, 28, 28],
                                           "data": [v for image in batch for v in image]}]}
    status, _, body = post_json(server.http_url + "/v2/models/fashion_mnist/infer", payload)
    assert status == 200, body
    response = json.loads(body)
    assert response["model_name"] == "fashion_mnist"
    assert response["id"] == "json-1"
    output = response["outputs"][0]
    assert output["name"] == "logits" and output["shape"] == [len(batch), 10]
    return [output["data"][i * 10:(i + 1) * 10] for i in range(len(batch))]


def test_json_infer_classifies_real_test_images(server, images):
    pictures, labels = images
    logits = classify_json(server, pictures[:32]) + classify_json(server, pictures[32:64])
    predictions = [argmax(row) for row in logits]
    # The first test image is an ankle boot (class 9); the shipped model must get it right.
    assert labels[0] == 9 and predictions[0] == 9
    accuracy = sum(p == l for p, l in zip(predictions, labels[:64])) / 64
    assert accuracy >= 0.85, accuracy


def test_binary_infer_matches_json(server, images):
    pictures, _ = images
    json_logits = classify_json(server, pictures[:4])
    raw = b"".join(struct.pack("<784f", *image) for image in pictures[:4])
    header = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [4, 1, 28, 28],
                          "parameters": {"binary_data_size": len(raw)}}],
              "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}
    body, length_header = binary_request(header, [raw])
    status, headers, answer = curl(server.http_url + "/v2/models/fashion_mnist/infer", body,
                                   headers=["Content-Type: application/octet-stream",
                                            length_header])
    assert status == 200, answer
    json_length = int(headers["inference-header-content-length"])
    response = json.loads(answer[:json_length])
    output = response["outputs"][0]
    assert output["parameters"]["binary_data_size"] == 4 * 10 * 4
    values = struct.unpack("<40f", answer[json_length:])
    for row in range(4):
        for k in range(10):
            assert values[row * 10 + k] == pytest.approx(json_logits[row][k], rel=1e-6, abs=1e-6)


def identity_with_non_finite(http_url):
    """Sends NaN and infinities (binary: JSON requests cannot carry them) through the identity
    model and returns the JSON answer's bytes."""
    values = [1.5, float("nan"), float("inf"), float("-inf")] + [0.0] * 12
    raw = struct.pack("<16f", *values)
    header = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                          "parameters": {"binary_data_size": len(raw)}}]}
    body, length_header = binary_request(header, [raw])
    status, _, answer = curl(http_url + "/v2/models/identity/infer", body,
                             headers=["Content-Type: application/octet-stream", length_header])
    assert status == 200, answer
    return answer


def test_non_finite_outputs_are_tritons_bare_words_or_strict_json_strings(server):
    # Triton's spelling by default: Python's json reads it, a strict parser does not.
    literal = identity_with_non_finite(server.http_url).decode()
    assert "[1.5,NaN,Infinity,-Infinity,0" in literal
    with pytest.raises(ValueError):
        json.loads(literal, parse_constant=lambda word: (_ for _ in ()).throw(ValueError(word)))
    with BrigadeProcess(extra_args=["--http-json-non-finite", "string"]) as strict:
        answer = identity_with_non_finite(strict.http_url)
        data = json.loads(answer, parse_constant=lambda word: pytest.fail(f"bare {word}"))
        assert data["outputs"][0]["data"][:4] == [1.5, "NaN", "Infinity", "-Infinity"]


def test_gzip_request_and_response_bodies_as_tritons_clients_send_them(server, images):
    pictures, _ = images
    json_logits = classify_json(server, pictures[:32])
    payload = {"id": "gzip-1", "inputs": [{"name": "image", "datatype": "FP32",
                                           "shape": [32, 1, 28, 28],
                                           "data": [v for image in pictures[:32] for v in image]}]}
    plain = json.dumps(payload).encode()
    status, headers, answer = curl(server.http_url + "/v2/models/fashion_mnist/infer",
                                   gzip.compress(plain),
                                   headers=["Content-Type: application/json",
                                            "Content-Encoding: gzip", "Accept-Encoding: gzip"])
    assert status == 200, answer
    assert headers["content-encoding"] == "gzip"
    response = json.loads(gzip.decompress(answer))
    logits = response["outputs"][0]["data"]
    for row in range(32):
        assert logits[row * 10:(row + 1) * 10] == pytest.approx(json_logits[row], rel=1e-6,
                                                                abs=1e-6)
    # An encoding the server does not speak is refused by name, and nothing else breaks.
    status, _, body = curl(server.http_url + "/v2/models/fashion_mnist/infer", plain,
                           headers=["Content-Encoding: br"])
    assert status == 415 and b"'br'" in body


def test_statistics_use_tritons_field_names(server, images):
    classify_json(server, images[0][:1])
    status, _, body = curl(server.http_url + "/v2/models/fashion_mnist/stats")
    assert status == 200
    stats = json.loads(body)["model_stats"]
    assert stats[0]["name"] == "fashion_mnist"
    inference = stats[0]["inference_stats"]
    for field in ["success", "fail", "queue", "compute_input", "compute_infer", "compute_output",
                  "cache_hit", "cache_miss"]:
        assert set(inference[field]) == {"count", "ns"}
    assert inference["success"]["count"] >= 1
    assert stats[0]["batch_stats"], stats


def test_repository_index_lists_the_demo_models(server):
    status, _, body = post_json(server.http_url + "/v2/repository/index", {})
    assert status == 200
    names = {entry["name"]: entry for entry in json.loads(body)}
    assert names["fashion_mnist"]["state"] == "READY"


def error_of(status_body):
    status, _, body = status_body
    return status, json.loads(body)["error"]


@pytest.mark.parametrize("payload, status, fragment", [
    ("{not json", 400, ""),
    ({"inputs": [{"name": "image", "datatype": "FP33", "shape": [1, 1, 28, 28], "data": [0]}]},
     400, "FP33"),
    ({"inputs": [{"name": "image", "datatype": "INT32", "shape": [1, 1, 28, 28],
                  "data": [0] * 784}]}, 400, "datatype"),
    ({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 784], "data": [0] * 784}]},
     400, "shape"),
    ({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28], "data": [0] * 5}]},
     400, "image"),
    ({"inputs": [{"name": "pixels", "datatype": "FP32", "shape": [1, 1, 28, 28],
                  "data": [0] * 784}]}, 400, "pixels"),
    ({"inputs": []}, 400, "image"),
    ({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                  "data": [0] * 784}], "outputs": [{"name": "nope"}]}, 400, "nope"),
])
def test_bad_json_requests_get_a_clear_400(server, payload, status, fragment):
    got_status, message = error_of(
        post_json(server.http_url + "/v2/models/fashion_mnist/infer", payload))
    assert got_status == status, message
    assert fragment in message


def test_unknown_model_or_version_is_404(server):
    ok_input = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                            "data": [0] * 784}]}
    status, message = error_of(post_json(server.http_url + "/v2/models/nope/infer", ok_input))
    assert status == 404 and "nope" in message
    status, message = error_of(
        post_json(server.http_url + "/v2/models/fashion_mnist/versions/7/infer", ok_input))
    assert status == 404 and "7" in message
    assert curl(server.http_url + "/v2/models/nope")[0] == 404


def test_binary_size_mismatch_is_400(server):
    raw = struct.pack("<10f", *([0.0] * 10))
    header = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                          "parameters": {"binary_data_size": len(raw)}}]}
    body, length_header = binary_request(header, [raw])
    status, _, answer = curl(server.http_url + "/v2/models/fashion_mnist/infer", body,
                             headers=[length_header])
    assert status == 400, answer
    assert "error" in json.loads(answer)


def test_a_bad_request_does_not_disturb_good_ones(server, images):
    pictures, _ = images
    expected = classify_json(server, pictures[:1])[0]
    results, errors = [], []

    def good():
        results.append(classify_json(server, pictures[:1])[0])

    def bad():
        errors.append(post_json(server.http_url + "/v2/models/fashion_mnist/infer", "{garbage")[0])

    threads = [threading.Thread(target=good if i % 2 else bad) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [400] * 8
    assert all(row == pytest.approx(expected) for row in results) and len(results) == 8


def test_body_over_the_limit_is_413():
    # The JSON body below is about 4 KB, twice the limit.
    with BrigadeProcess(extra_args=["--http-max-input-size", "2048"]) as small:
        payload = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                               "data": [0.5] * 784}]}
        status, message = error_of(
            post_json(small.http_url + "/v2/models/fashion_mnist/infer", payload))
        assert status == 413, message


def test_a_body_past_the_inflight_budget_is_503_and_the_budget_is_in_metrics():
    # A JSON body of about 4 KB against a 3,000-byte budget.
    with BrigadeProcess(extra_args=["--max-inflight-bytes", "3000"]) as small:
        payload = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                               "data": [0.5] * 784}]}
        status, headers, body = post_json(
            small.http_url + "/v2/models/fashion_mnist/infer", payload)
        assert status == 503, body
        assert headers.get("retry-after") == "1"
        assert "limit of request memory (3000 bytes" in json.loads(body)["error"]
        status, _, _ = curl(small.http_url + "/v2/health/ready")
        assert status == 200  # bodiless requests still pass
        status, _, text = curl(small.http_url + "/metrics")
        assert status == 200, text
        metrics = text.decode()
        assert "brigade_inflight_request_limit_bytes 3000" in metrics
        assert 'brigade_inflight_budget_refusals_total{protocol="http"} 1' in metrics


def test_a_bad_inflight_budget_stops_the_start_naming_the_flag():
    proc = subprocess.run([BRIGADE_BIN, "serve", "--model-repository", DEMO_REPOSITORY,
                           "--max-inflight-bytes", "lots"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "--max-inflight-bytes 'lots'" in proc.stdout + proc.stderr


SLOW_MODEL = """
backend: "brigade"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
parameters { key: "compute_us" value { string_value: "300000" } }
"""


def test_sigterm_lets_in_flight_requests_finish_and_exits_0():
    repo = tempfile.mkdtemp(prefix="brigade-slow-")
    try:
        os.makedirs(os.path.join(repo, "slow", "1"))
        with open(os.path.join(repo, "slow", "config.pbtxt"), "w") as f:
            f.write(SLOW_MODEL)
        process = BrigadeProcess(model_repository=repo).start()
        try:
            payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4],
                                   "data": [1, 2, 3, 4]}]}
            statuses = []

            def call():
                statuses.append(post_json(process.http_url + "/v2/models/slow/infer", payload)[0])

            threads = [threading.Thread(target=call) for _ in range(3)]
            for t in threads:
                t.start()
            time.sleep(0.2)  # the requests are queued or running
            process.proc.send_signal(15)
            for t in threads:
                t.join()
            assert process.proc.wait(timeout=30) == 0
            assert statuses == [200, 200, 200]
        finally:
            process.stop()
    finally:
        shutil.rmtree(repo, ignore_errors=True)
