"""End-to-end tests of the sliced demo: fashion_mnist_sliced (router -> switch -> one expert ->
fusion, an ensemble of Brigade's switch and fusion steps) answers as the whole two-task model
fashion_mnist_two_task, over HTTP (JSON) and gRPC (raw tensors), on real Fashion-MNIST test
images, one per request and as a batch whose rows go to different experts; only the expert the
router picks runs; a switch on a missing parameter is a 400 naming
it; a bad switch fails its own load naming the step. The models are scripts/
train_fashion_mnist_sliced.py's.
"""

import json
import os
import shutil
import struct
import tempfile
import time
import urllib.request

import grpc
import pytest

import grpc_client_test
from brigade_process import DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import load_test_set
from test_http_e2e import argmax, post_json

WHOLE = "fashion_mnist_two_task"
SLICED = "fashion_mnist_sliced"
ROUTER = "fashion_mnist_group_router"
GROUPS = ("tops", "shoes", "other")
EXPERTS = tuple(f"fashion_mnist_expert_{group}" for group in GROUPS)
OUTPUTS = ("class_logits", "group_logits", "scores")
# Fashion-MNIST class -> group (scripts/train_fashion_mnist_sliced.py's GROUP_OF_CLASS).
GROUP_OF_CLASS = [0, 2, 0, 0, 0, 1, 0, 1, 2, 1]
IMAGES = 60

# The branch from a request parameter, without a default: a request without it is refused.
BY_PARAMETER = """
name: "sliced_by_parameter"
platform: "ensemble"
max_batch_size: 32
input [ { name: "image" data_type: TYPE_FP32 dims: [ 1, 28, 28 ] } ]
output [ { name: "class_logits" data_type: TYPE_FP32 dims: [ 10 ] } ]
ensemble_scheduling {
  step [
    { switch { parameter: "group"
               branch { value: "tops" step: "tops" } branch { value: "shoes" step: "shoes" } } },
    { name: "tops" model_name: "fashion_mnist_expert_tops"
      input_map { key: "image" value: "image" } output_map { key: "class_logits" value: "t" } },
    { name: "shoes" model_name: "fashion_mnist_expert_shoes"
      input_map { key: "image" value: "image" } output_map { key: "class_logits" value: "s" } },
    { fusion { op: SELECT input: [ "t", "s" ] output: "class_logits" } }
  ]
}
"""

# A branch listing a step no step is named: the load fails naming the branch and the switch.
BAD_BRANCH = BY_PARAMETER.replace('"sliced_by_parameter"', '"bad_branch"', 1).replace(
    'step: "shoes" }', 'step: "sandals" }', 1)


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="brigade-sliced-repo-")
    for name in (WHOLE, SLICED, ROUTER) + EXPERTS:
        os.symlink(os.path.join(DEMO_REPOSITORY, name), os.path.join(repo, name))
    for name, config in (("sliced_by_parameter", BY_PARAMETER), ("bad_branch", BAD_BRANCH)):
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(config)
    try:
        with BrigadeProcess(model_repository=repo,
                            extra_args=["--model-control-mode", "explicit", "--load-model", "*",
                                        "--exit-on-error", "false", "--allow-symlinked-models",
                                        "--trace-rate", "1", "--trace-file",
                                        os.path.join(repo, "traces.jsonl")]) as process:
            process.trace_file = os.path.join(repo, "traces.jsonl")
            yield process
    finally:
        shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-sliced-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def images():
    return load_test_set(IMAGES)


def http_infer(server, model, image, parameters=None):
    payload = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                           "data": image}]}
    if parameters:
        payload["parameters"] = parameters
    status, _, body = post_json(f"{server.http_url}/v2/models/{model}/infer", payload)
    return status, json.loads(body)


def http_outputs(server, model, image):
    status, body = http_infer(server, model, image)
    assert status == 200, body
    return {output["name"]: output["data"] for output in body["outputs"]}


def success_counts(server):
    with urllib.request.urlopen(f"{server.http_url}/v2/models/stats", timeout=10) as response:
        stats = json.loads(response.read())["model_stats"]
    return {s["name"]: s["inference_stats"]["success"]["count"] for s in stats}


def assert_same(sliced, whole, where):
    for name in OUTPUTS:
        assert sliced[name] == pytest.approx(whole[name], rel=1e-5, abs=1e-5), f"{where}: {name}"


def test_the_sliced_model_answers_as_the_whole_model_over_http(server, images):
    pictures, labels = images
    groups_seen = set()
    correct = 0
    for index, image in enumerate(pictures):
        whole = http_outputs(server, WHOLE, image)
        sliced = http_outputs(server, SLICED, image)
        assert_same(sliced, whole, f"image {index}")
        # The second task, and the first: the same decisions, not just close numbers.
        assert argmax(sliced["group_logits"]) == argmax(whole["group_logits"])
        assert argmax(sliced["class_logits"]) == argmax(whole["class_logits"])
        groups_seen.add(argmax(sliced["group_logits"]))
        correct += argmax(sliced["class_logits"]) == labels[index]
    # Sixty real images reach every expert, and the model is a classifier worth the name.
    assert groups_seen == {0, 1, 2}
    assert correct >= 0.75 * len(pictures)


def http_batch_outputs(server, model, pictures):
    payload = {"inputs": [{"name": "image", "datatype": "FP32",
                           "shape": [len(pictures), 1, 28, 28],
                           "data": [x for image in pictures for x in image]}]}
    status, _, body = post_json(f"{server.http_url}/v2/models/{model}/infer", payload)
    assert status == 200, body
    outputs = {}
    for output in json.loads(body)["outputs"]:
        width = output["shape"][1]
        assert output["shape"] == [len(pictures), width]
        outputs[output["name"]] = [output["data"][width * r:width * (r + 1)]
                                   for r in range(len(pictures))]
    return outputs


def test_a_batch_of_mixed_groups_sends_each_row_to_its_expert_over_http(server, images):
    pictures, _ = images
    batch = pictures[:24]
    whole = http_batch_outputs(server, WHOLE, batch)
    groups = [argmax(row) for row in whole["group_logits"]]
    # Twenty-four real images pick at least two experts: the batch is split by row.
    assert len(set(groups)) >= 2, groups
    before = success_counts(server)
    sliced = http_batch_outputs(server, SLICED, batch)
    after = success_counts(server)
    for r in range(len(batch)):
        assert_same({name: sliced[name][r] for name in OUTPUTS},
                    {name: whole[name][r] for name in OUTPUTS}, f"row {r}")
    # Each expert its rows picked ran once, on those rows; the others never ran.
    for group, expert in enumerate(EXPERTS):
        assert after.get(expert, 0) - before.get(expert, 0) == (group in groups), expert


def test_the_sliced_model_answers_as_the_whole_model_over_grpc(server, stubs, images):
    pb, stub_module = stubs
    pictures, _ = images
    widths = {"class_logits": 10, "group_logits": 3, "scores": 13}

    def infer(stub, model, image):
        request = pb.ModelInferRequest(model_name=model)
        tensor = request.inputs.add(name="image", datatype="FP32")
        tensor.shape.extend([1, 1, 28, 28])
        request.raw_input_contents.append(struct.pack("<784f", *image))
        response = stub.ModelInfer(request, timeout=30)
        assert response.model_name == model
        return {output.name: list(struct.unpack(f"<{widths[output.name]}f",
                                                response.raw_output_contents[i]))
                for i, output in enumerate(response.outputs)}

    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        for index, image in enumerate(pictures[:30]):
            whole = infer(stub, WHOLE, image)
            sliced = infer(stub, SLICED, image)
            assert set(sliced) == set(OUTPUTS)
            assert_same(sliced, whole, f"image {index}")
        metadata = stub.ModelMetadata(pb.ModelMetadataRequest(name=SLICED), timeout=10)
        assert metadata.platform == "ensemble"
        assert [t.name for t in metadata.outputs] == list(OUTPUTS)


def branch_counts(server):
    with urllib.request.urlopen(f"{server.http_url}/metrics", timeout=10) as response:
        text = response.read().decode()
    counts = {}
    for group in GROUPS:
        series = (f'brigade_ensemble_branch_total{{model="{SLICED}",version="1",step="by_group",'
                  f'branch="{group}",reason="value"}} ')
        line = next((line for line in text.splitlines() if line.startswith(series)), None)
        assert line is not None, f"no series {series}"
        counts[group] = float(line[len(series):])
    return counts


def test_only_the_expert_the_router_picks_runs(server, images):
    pictures, _ = images
    before = success_counts(server)
    branches_before = branch_counts(server)
    picked = [0, 0, 0]
    for image in pictures[:20]:
        picked[argmax(http_outputs(server, SLICED, image)["group_logits"])] += 1
    after = success_counts(server)
    assert after[SLICED] - before[SLICED] == 20
    assert after[ROUTER] - before[ROUTER] == 20
    # Each request ran one expert, the one its group scores chose: the others never ran.
    for group, expert in enumerate(EXPERTS):
        assert after.get(expert, 0) - before.get(expert, 0) == picked[group], expert
    # And /metrics counts the switch's decisions per branch.
    branches_after = branch_counts(server)
    for group, name in enumerate(GROUPS):
        assert branches_after[name] - branches_before[name] == picked[group], name


def test_a_parameter_picks_the_branch_and_its_absence_is_a_400_naming_it(server, images):
    pictures, labels = images
    shoe = next(i for i, label in enumerate(labels) if GROUP_OF_CLASS[label] == 1)
    status, body = http_infer(server, "sliced_by_parameter", pictures[shoe], {"group": "shoes"})
    assert status == 200, body
    expert = http_outputs(server, "fashion_mnist_expert_shoes", pictures[shoe])
    assert body["outputs"][0]["data"] == pytest.approx(expert["class_logits"], rel=1e-5,
                                                       abs=1e-5)
    status, body = http_infer(server, "sliced_by_parameter", pictures[shoe])
    assert status == 400, body
    assert "ensemble 'sliced_by_parameter' step 1 (switch)" in body["error"]
    assert "no parameter 'group'" in body["error"]
    status, body = http_infer(server, "sliced_by_parameter", pictures[shoe], {"group": "hats"})
    assert status == 400, body
    assert "parameter 'group' is 'hats', which no branch lists" in body["error"]


def test_a_parameter_switch_over_grpc_takes_its_branch_or_is_invalid_argument(server, stubs,
                                                                              images):
    pb, stub_module = stubs
    pictures, _ = images

    def call(**parameters):
        request = pb.ModelInferRequest(model_name="sliced_by_parameter")
        for key, value in parameters.items():
            request.parameters[key].string_param = value
        tensor = request.inputs.add(name="image", datatype="FP32")
        tensor.shape.extend([1, 1, 28, 28])
        request.raw_input_contents.append(struct.pack("<784f", *pictures[0]))
        return stub.ModelInfer(request, timeout=30)

    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        response = call(group="tops")
        expert = http_outputs(server, "fashion_mnist_expert_tops", pictures[0])["class_logits"]
        assert list(struct.unpack("<10f", response.raw_output_contents[0])) == pytest.approx(
            expert, rel=1e-5, abs=1e-5)
        with pytest.raises(grpc.RpcError) as refused:
            call()
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "no parameter 'group'" in refused.value.details()


def test_a_bad_branch_fails_its_own_load_naming_the_step(server):
    status, _, body = post_json(f"{server.http_url}/v2/repository/index", "{}")
    assert status == 200
    index = {entry["name"]: entry for entry in json.loads(body)}
    assert index[SLICED]["state"] == "READY"
    assert index["bad_branch"]["state"] == "UNAVAILABLE"
    assert ("branch 'branch 2' of step 1 (switch) lists step 'sandals', but no step has that "
            "name") in index["bad_branch"]["reason"]


def trace_spans(path):
    found = []
    try:
        with open(path) as f:
            for line in f:
                for resource in json.loads(line).get("resourceSpans", []):
                    for scope in resource.get("scopeSpans", []):
                        found += scope.get("spans", [])
    except FileNotFoundError:
        pass
    return found


def span_attributes(span):
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def test_a_trace_has_a_span_per_step_that_ran_naming_the_branch(server, images):
    pictures, _ = images
    payload = {"id": "traced-slice", "inputs": [
        {"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28], "data": pictures[0]}]}
    status, _, body = post_json(f"{server.http_url}/v2/models/{SLICED}/infer", payload)
    assert status == 200, body
    outputs = {output["name"]: output["data"] for output in json.loads(body)["outputs"]}
    group = argmax(outputs["group_logits"])

    def steps():
        spans = trace_spans(server.trace_file)
        roots = [s for s in spans if s["name"] == "infer"
                 and span_attributes(s).get("request_id") == "traced-slice"]
        if not roots:
            return None
        root = roots[-1]
        return [span_attributes(s) for s in spans
                if s["name"] == "step" and s.get("parentSpanId") == root["spanId"]]

    deadline = time.monotonic() + 10
    found = steps()
    while not found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = steps()
    assert found, "no trace of the sliced model"
    names = sorted(step["brigade.step_name"] for step in found)
    # The router, the switch, the one expert it chose, and the two fusions: five of the seven.
    assert names == sorted(["step 1 (model 'fashion_mnist_group_router')",
                            "step 2 (switch 'by_group')",
                            f"step {3 + group} (model '{EXPERTS[group]}')",
                            "step 6 (fusion 'join')", "step 7 (fusion 'scores')"]), names
    switch = next(step for step in found if step["brigade.step_name"].startswith("step 2"))
    assert switch["brigade.branch"] == GROUPS[group]
    assert "model_name" not in switch
