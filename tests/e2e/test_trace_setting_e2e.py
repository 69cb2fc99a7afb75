"""End-to-end tests of Triton's trace extension (GET/POST /v2[/models/{m}]/trace/setting and
gRPC TraceSetting) over Brigade's tracer: settings change at run time and decide what reaches the
JSON-lines trace file."""

import json
import os
import shutil
import tempfile
import time

import grpc
import pytest

import grpc_client_test
from brigade_process import BrigadeProcess
from test_shm_e2e import http


def infer(server, model="identity"):
    payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                           "data": [1.0] * 16}]}
    status, _, raw = http(server, f"/v2/models/{model}/infer", payload)
    assert status == 200, raw


def traced_requests(path):
    """Root spans ("infer") in the trace file (OTLP/JSON, one export per line), by model."""
    counts = {}
    if not os.path.exists(path):
        return counts
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            for resource in json.loads(line).get("resourceSpans", []):
                for scope in resource.get("scopeSpans", []):
                    for span in scope.get("spans", []):
                        if span.get("name") != "infer":
                            continue
                        model = next((a["value"].get("stringValue") for a in
                                      span.get("attributes", []) if a["key"] == "model_name"),
                                     None)
                        counts[model] = counts.get(model, 0) + 1
    return counts


def wait_for(predicate, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.1)


@pytest.fixture(scope="module")
def workdir():
    path = tempfile.mkdtemp(prefix="brigade-trace-e2e-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def server(workdir):
    trace_file = os.path.join(workdir, "traces.jsonl")
    with BrigadeProcess(extra_args=["--trace-file", trace_file, "--trace-rate", "0",
                                    "--trace-errors", "false"]) as process:
        process.trace_file = trace_file
        yield process


def test_global_settings_start_from_the_flags(server):
    status, settings, raw = http(server, "/v2/trace/setting")
    assert status == 200, raw
    assert settings == {"trace_level": ["TIMESTAMPS"], "trace_rate": "0", "trace_count": "-1",
                        "log_frequency": "0", "trace_file": server.trace_file,
                        "trace_mode": "opentelemetry"}


def test_a_rate_set_at_run_time_traces_the_next_requests_and_a_count_stops_them(server):
    before = traced_requests(server.trace_file).get("identity", 0)
    status, settings, raw = http(server, "/v2/trace/setting",
                                 {"trace_rate": "1", "trace_count": "3"})
    assert status == 200, raw
    assert settings["trace_rate"] == "1" and settings["trace_count"] == "3"
    for _ in range(6):
        infer(server)
    wait_for(lambda: traced_requests(server.trace_file).get("identity", 0) >= before + 3)
    time.sleep(1.5)  # anything beyond the count would have been written by now
    assert traced_requests(server.trace_file).get("identity", 0) == before + 3
    assert http(server, "/v2/trace/setting")[1]["trace_count"] == "0"
    status, settings, _ = http(server, "/v2/trace/setting", {"trace_count": None,
                                                             "trace_rate": None})
    assert settings["trace_count"] == "-1" and settings["trace_rate"] == "0"


def test_a_models_settings_override_the_global_ones_until_cleared(server):
    assert http(server, "/v2/trace/setting", {"trace_rate": "1"})[0] == 200
    status, settings, raw = http(server, "/v2/models/identity/trace/setting",
                                 {"trace_level": ["OFF"]})
    assert status == 200, raw
    assert settings["trace_level"] == ["OFF"] and settings["trace_rate"] == "1"
    assert http(server, "/v2/trace/setting")[1]["trace_level"] == ["TIMESTAMPS"]
    before = traced_requests(server.trace_file)
    for _ in range(3):
        infer(server)
    payload = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                           "data": [0.0] * 784}]}
    assert http(server, "/v2/models/fashion_mnist/infer", payload)[0] == 200
    wait_for(lambda: traced_requests(server.trace_file).get("fashion_mnist", 0)
             > before.get("fashion_mnist", 0))
    assert traced_requests(server.trace_file).get("identity", 0) == before.get("identity", 0)
    status, settings, _ = http(server, "/v2/models/identity/trace/setting",
                               {"trace_level": None})
    assert settings["trace_level"] == ["TIMESTAMPS"]
    assert http(server, "/v2/trace/setting", {"trace_rate": "0"})[0] == 200


@pytest.mark.parametrize("change, status, fragment", [
    ({"trace_level": ["TENSORS"]}, 501, "TENSORS is not supported"),
    ({"trace_level": ["LOUD"]}, 400, "unknown level 'LOUD'"),
    ({"trace_rate": "-5"}, 400, "'trace_rate'"),
    ({"trace_rate": 5}, 400, "must be a string"),
    ({"trace_file": "/tmp/elsewhere.json"}, 501, "set at start-up"),
    ({"trace_mode": "triton"}, 501, "trace_mode"),
    ({"log_frequency": "10"}, 501, "log_frequency"),
    ({"colour": "red"}, 400, "unknown trace setting 'colour'"),
])
def test_what_brigade_cannot_do_is_refused_by_name(server, change, status, fragment):
    got, body, raw = http(server, "/v2/trace/setting", change)
    assert got == status, raw
    assert fragment in body["error"]


def test_an_unknown_model_is_404(server):
    assert http(server, "/v2/models/nope/trace/setting")[0] == 404


def test_grpc_trace_setting_reads_and_changes_the_same_settings(server):
    out_dir = tempfile.mkdtemp(prefix="brigade-grpc-stubs-")
    try:
        grpc_client_test.generate_stubs(out_dir)
        pb, stub_module = grpc_client_test.PB, grpc_client_test.STUB_MODULE
        with grpc.insecure_channel(server.grpc_target) as channel:
            stub = stub_module.GRPCInferenceServiceStub(channel)
            read = stub.TraceSetting(pb.TraceSettingRequest(), timeout=10)
            assert list(read.settings["trace_level"].value) == ["TIMESTAMPS"]
            request = pb.TraceSettingRequest(model_name="identity")
            request.settings["trace_rate"].value.append("50")
            changed = stub.TraceSetting(request, timeout=10)
            assert list(changed.settings["trace_rate"].value) == ["50"]
            assert http(server, "/v2/models/identity/trace/setting")[1]["trace_rate"] == "50"
            clear = pb.TraceSettingRequest(model_name="identity")
            clear.settings["trace_rate"].SetInParent()
            assert list(stub.TraceSetting(clear, timeout=10).settings["trace_rate"].value) == \
                ["0"]
            bad = pb.TraceSettingRequest()
            bad.settings["trace_level"].value.append("TENSORS")
            with pytest.raises(grpc.RpcError) as error:
                stub.TraceSetting(bad, timeout=10)
            assert error.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
