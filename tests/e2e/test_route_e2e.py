"""End-to-end tests of ensembles: Triton-style `platform: "ensemble"` configs served by the real
binary, called over HTTP (curl) and gRPC (python3-grpcio), checked against values computed here.
"""

import json
import math
import os
import re
import shutil
import struct
import subprocess
import tempfile
import urllib.error
import urllib.request

import grpc
import pytest

import grpc_client_test
from brigade_process import BRIGADE_BIN, DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import load_test_set
from test_http_e2e import post_json

ADD_SUB = """
name: "add_sub"
backend: "brigade"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] },
        { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] },
         { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]
parameters { key: "op" value { string_value: "add_sub" } }
dynamic_batching { }
"""

COPY = """
name: "copy"
backend: "brigade"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
parameters { key: "op" value { string_value: "identity" } }
"""

# Written as Triton's documentation writes ensembles: step 1 feeds two steps that do not depend on
# one another (they run at once), the ensemble answers with what the last steps write.
PIPELINE = """
name: "pipeline"
platform: "ensemble"
max_batch_size: 8
input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] },
        { name: "B" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "SUM" data_type: TYPE_FP32 dims: [ 4 ] },
         { name: "TWICE_A" data_type: TYPE_FP32 dims: [ 4 ] },
         { name: "TWICE_B" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling {
  step [
    {
      model_name: "add_sub"
      model_version: -1
      input_map { key: "INPUT0" value: "A" }
      input_map { key: "INPUT1" value: "B" }
      output_map { key: "OUTPUT0" value: "sum" }
      output_map { key: "OUTPUT1" value: "difference" }
    },
    {
      model_name: "copy"
      model_version: -1
      input_map { key: "INPUT0" value: "sum" }
      output_map { key: "OUTPUT0" value: "SUM" }
    },
    {
      model_name: "add_sub"
      model_version: -1
      input_map { key: "INPUT0" value: "sum" }
      input_map { key: "INPUT1" value: "difference" }
      output_map { key: "OUTPUT0" value: "TWICE_A" }
      output_map { key: "OUTPUT1" value: "TWICE_B" }
    }
  ]
}
"""

# Bad ensembles: each fails its own load, naming the step or tensor; the rest keeps serving.
CYCLE = """
name: "cycle"
platform: "ensemble"
max_batch_size: 8
input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling {
  step [
    { model_name: "add_sub" input_map { key: "INPUT0" value: "A" }
      input_map { key: "INPUT1" value: "y" } output_map { key: "OUTPUT0" value: "x" }
      output_map { key: "OUTPUT1" value: "OUT" } },
    { model_name: "copy" input_map { key: "INPUT0" value: "x" }
      output_map { key: "OUTPUT0" value: "y" } }
  ]
}
"""

UNKNOWN_MODEL = """
name: "unknown_step"
platform: "ensemble"
max_batch_size: 8
input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling {
  step [ { model_name: "no_such_model" input_map { key: "INPUT0" value: "A" }
           output_map { key: "OUTPUT0" value: "OUT" } } ]
}
"""

# Two variants with the same inputs and outputs, and a router over them: urgent requests and new
# users (user_id < 1000) to the fast one, everyone else to the accurate one.
ROUTER = """
name: "router"
platform: "brigade_router"
routing {
  variant { name: "fast" model_name: "add_sub_fast" }
  variant { name: "accurate" model_name: "add_sub" }
  rule { parameter: "urgent" op: EQ value: "true" variant: "fast" }
  rule { parameter: "user_id" op: LT value: "1000" variant: "fast" }
  default_variant: "accurate"
}
"""

SPLIT = """
name: "split"
platform: "brigade_router"
routing {
  variant { model_name: "add_sub_fast" }
  variant { model_name: "add_sub" }
  split { variant: "add_sub_fast" weight: 1 }
  split { variant: "add_sub" weight: 1 }
  sticky_parameter: "user"
}
"""

BAD_ROUTER = """
name: "bad_router"
platform: "brigade_router"
routing {
  variant { model_name: "add_sub" }
  rule { parameter: "urgent" value: "true" variant: "tiny" }
}
"""

MODELS = {"add_sub": ADD_SUB, "add_sub_fast": ADD_SUB.replace('"add_sub"', '"add_sub_fast"', 1),
          "copy": COPY, "pipeline": PIPELINE, "cycle": CYCLE, "unknown_step": UNKNOWN_MODEL,
          "router": ROUTER, "split": SPLIT, "bad_router": BAD_ROUTER}


# The demo repository's cascade and the two classifiers it runs.
DEMO_MODELS = ("fashion_mnist_small", "fashion_mnist", "fashion_mnist_cascade")


def write_repository(models):
    repo = tempfile.mkdtemp(prefix="brigade-route-repo-")
    for name, config in models.items():
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(config)
    for name in DEMO_MODELS:
        os.symlink(os.path.join(DEMO_REPOSITORY, name), os.path.join(repo, name))
    return repo


@pytest.fixture(scope="module")
def server():
    repo = write_repository(MODELS)
    try:
        with BrigadeProcess(model_repository=repo,
                            extra_args=["--model-control-mode", "explicit",
                                        "--load-model", "*", "--exit-on-error", "false",
                                        "--allow-symlinked-models"]) as process:
            yield process
    finally:
        shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-route-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


A = [[1, 2, 3, 4], [10, 20, 30, 40]]
B = [[0.5, 0.5, 0.5, 0.5], [1, 2, 3, 4]]


def expected():
    total = [[a + b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]
    return {"SUM": total, "TWICE_A": [[2 * a for a in row] for row in A],
            "TWICE_B": [[2 * b for b in row] for row in B]}


def http_infer(server, model, payload):
    status, _, body = post_json(f"{server.http_url}/v2/models/{model}/infer", payload)
    return status, json.loads(body)


def pipeline_payload(outputs=None):
    payload = {"id": "e-1", "inputs": [
        {"name": "A", "datatype": "FP32", "shape": [2, 4], "data": [v for r in A for v in r]},
        {"name": "B", "datatype": "FP32", "shape": [2, 4], "data": [v for r in B for v in r]}]}
    if outputs is not None:
        payload["outputs"] = [{"name": name} for name in outputs]
    return payload


def test_a_triton_ensemble_answers_over_http_like_a_model(server):
    status, body = http_infer(server, "pipeline", pipeline_payload())
    assert status == 200, body
    assert body["model_name"] == "pipeline" and body["model_version"] == "1"
    assert body["id"] == "e-1"
    want = expected()
    assert [o["name"] for o in body["outputs"]] == ["SUM", "TWICE_A", "TWICE_B"]
    for output in body["outputs"]:
        assert output["shape"] == [2, 4]
        assert output["datatype"] == "FP32"
        assert output["data"] == [v for row in want[output["name"]] for v in row]


def test_the_ensemble_answers_with_only_the_outputs_asked_for(server):
    status, body = http_infer(server, "pipeline", pipeline_payload(outputs=["TWICE_B"]))
    assert status == 200, body
    assert [o["name"] for o in body["outputs"]] == ["TWICE_B"]


def test_a_triton_ensemble_answers_over_grpc(server, stubs):
    pb, stub_module = stubs
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name="pipeline", id="g-1")
        for name, rows in (("A", A), ("B", B)):
            tensor = request.inputs.add(name=name, datatype="FP32")
            tensor.shape.extend([2, 4])
            request.raw_input_contents.append(struct.pack("<8f", *[v for r in rows for v in r]))
        response = stub.ModelInfer(request, timeout=30)
        assert response.model_name == "pipeline" and response.id == "g-1"
        want = expected()
        for index, output in enumerate(response.outputs):
            assert list(output.shape) == [2, 4]
            values = list(struct.unpack("<8f", response.raw_output_contents[index]))
            assert values == [v for row in want[output.name] for v in row], output.name
        metadata = stub.ModelMetadata(pb.ModelMetadataRequest(name="pipeline"), timeout=10)
        assert metadata.platform == "ensemble"
        assert [t.name for t in metadata.inputs] == ["A", "B"]
        assert [t.name for t in metadata.outputs] == ["SUM", "TWICE_A", "TWICE_B"]
        ready = stub.ModelReady(pb.ModelReadyRequest(name="pipeline"), timeout=10)
        assert ready.ready


def test_metadata_and_statistics_count_the_ensemble_and_each_step(server):
    metadata = get_json(f"{server.http_url}/v2/models/pipeline")
    assert metadata["platform"] == "ensemble"
    assert [t["name"] for t in metadata["inputs"]] == ["A", "B"]
    assert metadata["inputs"][0]["shape"] == [-1, 4]

    def counts():
        stats = get_json(f"{server.http_url}/v2/models/stats")["model_stats"]
        return {s["name"]: s["inference_stats"]["success"]["count"] for s in stats}

    before = counts()
    for _ in range(3):
        status, body = http_infer(server, "pipeline", pipeline_payload())
        assert status == 200, body
    after = counts()
    # One ensemble request is one request of the ensemble, two of add_sub, one of copy.
    assert after["pipeline"] - before["pipeline"] == 3
    assert after["add_sub"] - before["add_sub"] == 6
    assert after["copy"] - before["copy"] == 3
    with urllib.request.urlopen(f"{server.http_url}/metrics", timeout=10) as response:
        metrics = response.read().decode()
    assert 'nv_inference_request_success{model="pipeline",version="1"}' in metrics


def test_bad_ensembles_fail_their_own_load_naming_the_step(server):
    status, _, body = post_json(f"{server.http_url}/v2/repository/index", "{}")
    assert status == 200
    index = {entry["name"]: entry for entry in json.loads(body)}
    assert index["pipeline"]["state"] == "READY"
    assert index["add_sub"]["state"] == "READY"
    assert index["cycle"]["state"] == "UNAVAILABLE"
    assert "the steps form a cycle through step 1 (model 'add_sub')" in index["cycle"]["reason"]
    assert index["unknown_step"]["state"] == "UNAVAILABLE"
    assert "step 1 (model 'no_such_model')" in index["unknown_step"]["reason"]


def test_bad_input_to_an_ensemble_is_a_400_naming_the_input(server):
    payload = pipeline_payload()
    payload["inputs"][1]["shape"] = [2, 3]
    payload["inputs"][1]["data"] = payload["inputs"][1]["data"][:6]
    status, body = http_infer(server, "pipeline", payload)
    assert status == 400
    assert "input 'B'" in body["error"]


def test_a_step_model_unloaded_under_the_ensemble_fails_requests_naming_the_step(server):
    status, _, body = post_json(f"{server.http_url}/v2/repository/models/copy/unload", "{}")
    assert status == 200, body
    try:
        status, body = http_infer(server, "pipeline", pipeline_payload())
        assert status in (404, 503), body
        assert "ensemble 'pipeline' step 2 (model 'copy')" in body["error"]
        # The other models keep serving.
        status, body = http_infer(server, "add_sub", {"inputs": [
            {"name": "INPUT0", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]},
            {"name": "INPUT1", "datatype": "FP32", "shape": [1, 4], "data": [1, 1, 1, 1]}]})
        assert status == 200, body
    finally:
        status, _, body = post_json(f"{server.http_url}/v2/repository/models/copy/load", "{}")
        assert status == 200, body
    status, body = http_infer(server, "pipeline", pipeline_payload())
    assert status == 200, body


def add_sub_payload(parameters=None):
    payload = {"inputs": [
        {"name": "INPUT0", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]},
        {"name": "INPUT1", "datatype": "FP32", "shape": [1, 4], "data": [1, 1, 1, 1]}]}
    if parameters is not None:
        payload["parameters"] = parameters
    return payload


def routed(server, model, parameters=None):
    status, body = http_infer(server, model, add_sub_payload(parameters))
    assert status == 200, body
    assert body["model_name"] == model
    assert body["outputs"][0]["data"] == [2, 3, 4, 5]
    return body["parameters"]["routed_to"]


def test_rules_route_by_request_parameters_over_http(server):
    assert routed(server, "router") == "add_sub:1"
    assert routed(server, "router", {"urgent": True}) == "add_sub_fast:1"
    assert routed(server, "router", {"urgent": False}) == "add_sub:1"
    assert routed(server, "router", {"user_id": 17}) == "add_sub_fast:1"
    assert routed(server, "router", {"user_id": 5000}) == "add_sub:1"


def grpc_routed(stubs, server, model, **parameters):
    pb, stub_module = stubs
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name=model)
        for key, value in parameters.items():
            if isinstance(value, bool):
                request.parameters[key].bool_param = value
            elif isinstance(value, int):
                request.parameters[key].int64_param = value
            else:
                request.parameters[key].string_param = value
        for name, values in (("INPUT0", [1, 2, 3, 4]), ("INPUT1", [1, 1, 1, 1])):
            tensor = request.inputs.add(name=name, datatype="FP32")
            tensor.shape.extend([1, 4])
            request.raw_input_contents.append(struct.pack("<4f", *values))
        response = stub.ModelInfer(request, timeout=30)
    assert response.model_name == model
    assert list(struct.unpack("<4f", response.raw_output_contents[0])) == [2, 3, 4, 5]
    return response.parameters["routed_to"].string_param


def test_rules_route_by_request_parameters_over_grpc(server, stubs):
    assert grpc_routed(stubs, server, "router") == "add_sub:1"
    assert grpc_routed(stubs, server, "router", urgent=True) == "add_sub_fast:1"
    assert grpc_routed(stubs, server, "router", user_id=17) == "add_sub_fast:1"
    assert grpc_routed(stubs, server, "router", user_id=123456) == "add_sub:1"


def test_a_sticky_split_keeps_each_user_on_one_variant_on_both_protocols(server, stubs):
    seen = set()
    for user in ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"):
        first = routed(server, "split", {"user": user})
        assert routed(server, "split", {"user": user}) == first
        assert grpc_routed(stubs, server, "split", user=user) == first
        seen.add(first)
    # Eight users at 50/50 land on both variants (all on one: probability 1/128).
    assert seen == {"add_sub:1", "add_sub_fast:1"}


def test_routing_decisions_are_counted_by_variant_and_reason(server):
    def decisions():
        with urllib.request.urlopen(f"{server.http_url}/metrics", timeout=10) as response:
            text = response.read().decode()
        counts = {}
        for line in text.splitlines():
            if line.startswith('brigade_route_decisions_total{model="router"'):
                labels, value = line.rsplit(" ", 1)
                counts[labels] = float(value)
        return counts

    before = decisions()
    routed(server, "router", {"urgent": True})
    routed(server, "router")
    after = decisions()
    rule = ('brigade_route_decisions_total{model="router",version="1",variant="fast",'
            'reason="rule"}')
    default = ('brigade_route_decisions_total{model="router",version="1",variant="accurate",'
               'reason="default"}')
    assert after[rule] - before.get(rule, 0) == 1
    assert after[default] - before.get(default, 0) == 1


def test_a_bad_router_fails_its_load_naming_the_rule(server):
    status, _, body = post_json(f"{server.http_url}/v2/repository/index", "{}")
    index = {entry["name"]: entry for entry in json.loads(body)}
    assert index["router"]["state"] == "READY"
    assert index["bad_router"]["state"] == "UNAVAILABLE"
    assert "rule 1 names variant 'tiny'" in index["bad_router"]["reason"]


def test_a_variant_unloaded_under_traffic_is_routed_around(server):
    status, _, body = post_json(
        f"{server.http_url}/v2/repository/models/add_sub_fast/unload", "{}")
    assert status == 200, body
    try:
        # Urgent traffic would go to "fast"; it is gone, so the default serves it.
        assert routed(server, "router", {"urgent": True}) == "add_sub:1"
    finally:
        status, _, body = post_json(
            f"{server.http_url}/v2/repository/models/add_sub_fast/load", "{}")
        assert status == 200, body
    assert routed(server, "router", {"urgent": True}) == "add_sub_fast:1"


def classify(server, model, image):
    status, body = http_infer(server, model, {"inputs": [
        {"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28], "data": image}]})
    assert status == 200, body
    return body["outputs"][0]["data"], body.get("parameters", {})


def cascade_threshold():
    with open(os.path.join(DEMO_REPOSITORY, "fashion_mnist_cascade", "config.pbtxt")) as f:
        return float(re.search(r"threshold:\s*([0-9.]+)", f.read()).group(1))


def test_the_demo_cascade_answers_with_the_small_model_unless_it_is_unsure(server):
    threshold = cascade_threshold()
    pictures, _ = load_test_set(40)
    outcomes = set()
    for image in pictures:
        logits, parameters = classify(server, "fashion_mnist_cascade", image)
        outcome = parameters["cascade"]
        outcomes.add(outcome)
        if outcome == "accepted":
            assert parameters["routed_to"] == "fashion_mnist_small:1"
            small, _ = classify(server, "fashion_mnist_small", image)
            assert logits == pytest.approx(small, rel=1e-5, abs=1e-5)
            top = max(small)
            exps = [math.exp(x - top) for x in small]
            assert max(exps) / sum(exps) >= threshold
        else:
            assert outcome == "escalated"
            assert parameters["routed_to"] == "fashion_mnist:1"
            cnn, _ = classify(server, "fashion_mnist", image)
            assert logits == pytest.approx(cnn, rel=1e-5, abs=1e-5)
            small, _ = classify(server, "fashion_mnist_small", image)
            top = max(small)
            exps = [math.exp(x - top) for x in small]
            assert max(exps) / sum(exps) < threshold
    # Forty real images: some the small model is sure of, some it is not.
    assert outcomes == {"accepted", "escalated"}


def classify_batch(server, model, images):
    flat = [x for image in images for x in image]
    status, body = http_infer(server, model, {"inputs": [
        {"name": "image", "datatype": "FP32", "shape": [len(images), 1, 28, 28], "data": flat}]})
    assert status == 200, body
    data = body["outputs"][0]["data"]
    return [data[10 * r:10 * r + 10] for r in range(len(images))], body.get("parameters", {})


def test_a_batch_sends_only_its_uncertain_rows_to_the_cnn_and_answers_in_order(server):
    threshold = cascade_threshold()
    pictures, _ = load_test_set(24)
    small, _ = classify_batch(server, "fashion_mnist_small", pictures)
    cnn, _ = classify_batch(server, "fashion_mnist", pictures)

    def sure(logits):
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        return max(exps) / sum(exps) >= threshold

    uncertain = [r for r in range(len(pictures)) if not sure(small[r])]
    # Twenty-four real images hold both kinds, so the batch is split.
    assert 0 < len(uncertain) < len(pictures)
    logits, parameters = classify_batch(server, "fashion_mnist_cascade", pictures)
    assert parameters["cascade"] == "partial"
    assert parameters["cascade_escalated_rows"] == len(uncertain)
    assert parameters["routed_to"] == "fashion_mnist_small:1,fashion_mnist:1"
    for r in range(len(pictures)):
        want = cnn[r] if r in uncertain else small[r]
        assert logits[r] == pytest.approx(want, rel=1e-5, abs=1e-5), r


# ---- rules on forwarded headers (Triton's --http/grpc-header-forward-pattern) --------------------

@pytest.fixture(scope="module")
def forwarding_server():
    repo = write_repository({name: MODELS[name] for name in ("add_sub", "add_sub_fast", "router")})
    pattern = "^(urgent|user_id|priority)$"
    try:
        with BrigadeProcess(model_repository=repo,
                            extra_args=["--allow-symlinked-models",
                                        "--http-header-forward-pattern", pattern,
                                        "--grpc-header-forward-pattern", pattern]) as process:
            yield process
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def http_routed_by_headers(server, headers, parameters=None):
    request = urllib.request.Request(
        f"{server.http_url}/v2/models/router/infer",
        data=json.dumps(add_sub_payload(parameters)).encode(),
        headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_rules_route_by_forwarded_headers_over_http(forwarding_server):
    def routed_to(headers, parameters=None):
        status, body = http_routed_by_headers(forwarding_server, headers, parameters)
        assert status == 200, body
        assert body["outputs"][0]["data"] == [2, 3, 4, 5]
        return body["parameters"]["routed_to"]
    assert routed_to({}) == "add_sub:1"
    assert routed_to({"urgent": "true"}) == "add_sub_fast:1"
    assert routed_to({"user_id": "17"}) == "add_sub_fast:1"  # compared as a number
    assert routed_to({"user_id": "5000"}) == "add_sub:1"
    assert routed_to({"x-other": "true"}) == "add_sub:1"  # not matched: not a parameter
    # The body's parameter wins over a header of the same name.
    assert routed_to({"urgent": "true"}, {"urgent": False}) == "add_sub:1"
    # A matched header naming a reserved parameter is refused, named.
    status, body = http_routed_by_headers(forwarding_server, {"priority": "1"})
    assert status == 400, body
    assert "header 'priority'" in body["error"]


def test_rules_route_by_forwarded_metadata_over_grpc(forwarding_server, stubs):
    pb, stub_module = stubs

    def call(metadata):
        with grpc.insecure_channel(forwarding_server.grpc_target) as channel:
            stub = stub_module.GRPCInferenceServiceStub(channel)
            request = pb.ModelInferRequest(model_name="router")
            for name, values in (("INPUT0", [1, 2, 3, 4]), ("INPUT1", [1, 1, 1, 1])):
                tensor = request.inputs.add(name=name, datatype="FP32")
                tensor.shape.extend([1, 4])
                request.raw_input_contents.append(struct.pack("<4f", *values))
            return stub.ModelInfer(request, timeout=30, metadata=metadata)

    assert call(()).parameters["routed_to"].string_param == "add_sub:1"
    assert call((("urgent", "true"),)).parameters["routed_to"].string_param == "add_sub_fast:1"
    assert call((("user_id", "17"),)).parameters["routed_to"].string_param == "add_sub_fast:1"
    with pytest.raises(grpc.RpcError) as refused:
        call((("priority", "1"),))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "header 'priority'" in refused.value.details()


def test_a_bad_forward_pattern_stops_the_start_naming_the_flag():
    repo = write_repository({"add_sub": ADD_SUB})
    try:
        result = subprocess.run(
            [BRIGADE_BIN, "serve", "--model-repository", repo, "--http-port", "0",
             "--grpc-port", "0", "--http-address", "127.0.0.1", "--grpc-address", "127.0.0.1",
             "--grpc-header-forward-pattern", "(unclosed"],
            capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(repo, ignore_errors=True)
    assert result.returncode != 0
    assert "--grpc-header-forward-pattern '(unclosed'" in result.stdout + result.stderr
