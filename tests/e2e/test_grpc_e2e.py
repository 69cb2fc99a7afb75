"""End-to-end tests of the gRPC front end: the real binary, Debian's python3-grpcio as client.

Stubs are generated at test time from Brigade's .proto files (grpc_client_test.generate_stubs),
and grpc_client_test.py's own suite (which also checks the wire format against the published tag
numbers by hand) runs against a repository with Triton's "simple" model and an identity model.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import grpc
import pytest

import grpc_client_test
from brigade_process import DEMO_REPOSITORY, BrigadeProcess
from fashion_mnist import load_test_set
from test_http_e2e import post_json

ADD_SUB = """
backend: "brigade"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
parameters { key: "op" value { string_value: "add_sub" } }
"""


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-grpc-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def repository():
    """The demo models plus Triton's "simple" model."""
    repo = tempfile.mkdtemp(prefix="brigade-grpc-repo-")
    for name in os.listdir(DEMO_REPOSITORY):
        os.symlink(os.path.join(DEMO_REPOSITORY, name), os.path.join(repo, name))
    os.makedirs(os.path.join(repo, "add_sub", "1"))
    with open(os.path.join(repo, "add_sub", "config.pbtxt"), "w") as f:
        f.write(ADD_SUB)
    yield repo
    shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def server(repository):
    # The demo models are linked in from the demo repository.
    with BrigadeProcess(model_repository=repository,
                        extra_args=["--allow-symlinked-models"]) as process:
        yield process


def test_independent_grpc_client_suite_passes(server):
    result = subprocess.run(
        [sys.executable, os.path.join(os.path.dirname(__file__), "grpc_client_test.py"),
         "--grpc-port", str(server.grpc_port)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def grpc_classify(stubs, server, pictures, compression=None):
    pb, stub_module = stubs
    with grpc.insecure_channel(server.grpc_target, compression=compression) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name="fashion_mnist", id="grpc-1")
        tensor = request.inputs.add(name="image", datatype="FP32")
        tensor.shape.extend([len(pictures), 1, 28, 28])
        request.raw_input_contents.append(
            b"".join(struct.pack("<784f", *image) for image in pictures))
        response = stub.ModelInfer(request, timeout=30)
    assert response.model_name == "fashion_mnist" and response.id == "grpc-1"
    assert list(response.outputs[0].shape) == [len(pictures), 10]
    values = struct.unpack(f"<{10 * len(pictures)}f", response.raw_output_contents[0])
    return [list(values[i * 10:(i + 1) * 10]) for i in range(len(pictures))]


def test_json_binary_and_grpc_answers_agree(stubs, server):
    pictures, labels = load_test_set(8)
    grpc_logits = grpc_classify(stubs, server, pictures)
    payload = {"inputs": [{"name": "image", "datatype": "FP32", "shape": [8, 1, 28, 28],
                           "data": [v for image in pictures for v in image]}]}
    status, _, body = post_json(server.http_url + "/v2/models/fashion_mnist/infer", payload)
    assert status == 200
    json_data = json.loads(body)["outputs"][0]["data"]
    for row in range(8):
        assert grpc_logits[row] == pytest.approx(json_data[row * 10:(row + 1) * 10],
                                                 rel=1e-6, abs=1e-6)
    predictions = [max(range(10), key=lambda k: row[k]) for row in grpc_logits]
    assert predictions[0] == labels[0] == 9


def test_gzip_compressed_grpc_messages_as_tritons_clients_send_them(stubs, server):
    """tritonclient.grpc's compression_algorithm: the channel gzips each request message."""
    pictures, _ = load_test_set(8)
    plain = grpc_classify(stubs, server, pictures)
    for compression in (grpc.Compression.Gzip, grpc.Compression.Deflate):
        compressed = grpc_classify(stubs, server, pictures, compression=compression)
        assert compressed == plain, compression


def call_error(stubs, server, build):
    pb, stub_module = stubs
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelInfer(build(pb), timeout=30)
    return error.value.code(), error.value.details()


def image_request(pb, model="fashion_mnist", datatype="FP32", shape=(1, 1, 28, 28), size=3136,
                  name="image"):
    request = pb.ModelInferRequest(model_name=model)
    tensor = request.inputs.add(name=name, datatype=datatype)
    tensor.shape.extend(shape)
    request.raw_input_contents.append(b"\0" * size)
    return request


@pytest.mark.parametrize("build, code, fragment", [
    (lambda pb: image_request(pb, model="nope"), grpc.StatusCode.NOT_FOUND, "nope"),
    (lambda pb: image_request(pb, datatype="FP33"), grpc.StatusCode.INVALID_ARGUMENT, "FP33"),
    (lambda pb: image_request(pb, datatype="INT32"), grpc.StatusCode.INVALID_ARGUMENT, "datatype"),
    (lambda pb: image_request(pb, shape=(1, 784)), grpc.StatusCode.INVALID_ARGUMENT, "shape"),
    (lambda pb: image_request(pb, size=100), grpc.StatusCode.INVALID_ARGUMENT, "image"),
    (lambda pb: image_request(pb, name="pixels"), grpc.StatusCode.INVALID_ARGUMENT, "pixels"),
])
def test_bad_grpc_requests_get_a_clear_status(stubs, server, build, code, fragment):
    got_code, details = call_error(stubs, server, build)
    assert got_code == code, details
    assert fragment in details


def test_model_ready_of_an_unknown_model_or_version_is_false_with_ok(stubs, server):
    """Triton's answer: tritonclient's `while not is_model_ready(m)` loops depend on it."""
    pb, stub_module = stubs
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        assert stub.ModelReady(pb.ModelReadyRequest(name="fashion_mnist"), timeout=10).ready
        for request in [pb.ModelReadyRequest(name="no_such_model"),
                        pb.ModelReadyRequest(name="fashion_mnist", version="99")]:
            assert not stub.ModelReady(request, timeout=10).ready, request
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelReady(pb.ModelReadyRequest(name="fashion_mnist", version="latest"),
                            timeout=10)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_log_settings_change_at_run_time(stubs, server):
    pb, stub_module = stubs
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = stub_module.GRPCInferenceServiceStub(channel)
        settings = stub.LogSettings(pb.LogSettingsRequest(), timeout=10).settings
        assert settings["log_info"].bool_param and settings["log_format"].string_param == "default"
        request = pb.LogSettingsRequest()
        request.settings["log_verbose_level"].uint32_param = 1
        assert stub.LogSettings(request, timeout=10).settings["log_verbose_level"].uint32_param == 1
        refused = pb.LogSettingsRequest()
        refused.settings["log_error"].bool_param = False  # warning and info stay on
        with pytest.raises(grpc.RpcError) as error:
            stub.LogSettings(refused, timeout=10)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "log_warning with log_error off" in error.value.details()
        request.settings["log_verbose_level"].uint32_param = 0
        assert stub.LogSettings(request, timeout=10).settings["log_verbose_level"].uint32_param == 0


def with_request_parameter(pb, key, set_value):
    request = image_request(pb)
    set_value(request.parameters[key])
    return request


@pytest.mark.parametrize("build, fragment", [
    (lambda pb: with_request_parameter(pb, "sequence_id", lambda p: setattr(p, "int64_param", 3)),
     "request parameter 'sequence_id'"),
    (lambda pb: with_request_parameter(pb, "triton_new", lambda p: setattr(p, "bool_param", True)),
     "request parameter 'triton_new'"),
    # Shared-memory parameters are implemented: test_shm_e2e.py.
])
def test_parameters_brigade_does_not_implement_are_refused_by_name(stubs, server, build,
                                                                   fragment):
    code, details = call_error(stubs, server, build)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, details
    assert fragment in details


def test_grpc_message_over_the_limit_is_resource_exhausted(stubs):
    with BrigadeProcess(extra_args=["--http-max-input-size", "2048"]) as small:
        code, details = call_error(stubs, small, lambda pb: image_request(pb))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, details


def test_on_sigterm_grpc_stops_accepting_while_http_still_drains(stubs):
    """Both front ends stop accepting at once: a gRPC call made while an HTTP request still
    drains (a 300 ms model) is refused at the connection (a load balancer retries that), never
    accepted and then answered "server is shutting down" by the draining pipeline."""
    import threading
    import time

    from test_http_e2e import SLOW_MODEL
    pb, stub_module = stubs
    repo = tempfile.mkdtemp(prefix="brigade-grpc-drain-")
    try:
        os.makedirs(os.path.join(repo, "slow", "1"))
        with open(os.path.join(repo, "slow", "config.pbtxt"), "w") as f:
            f.write(SLOW_MODEL)
        process = BrigadeProcess(model_repository=repo).start()
        try:
            payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4],
                                   "data": [1, 2, 3, 4]}]}
            statuses = []
            thread = threading.Thread(target=lambda: statuses.append(
                post_json(process.http_url + "/v2/models/slow/infer", payload)[0]))
            thread.start()
            time.sleep(0.1)  # the HTTP request is running
            process.proc.send_signal(15)
            time.sleep(0.1)  # drain has begun; HTTP still has ~100 ms to go
            with grpc.insecure_channel(process.grpc_target) as channel:
                stub = stub_module.GRPCInferenceServiceStub(channel)
                with pytest.raises(grpc.RpcError) as error:
                    stub.ServerLive(pb.ServerLiveRequest(), timeout=2)
            assert error.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "shutting down" not in (error.value.details() or ""), error.value.details()
            thread.join()
            assert statuses == [200]
            assert process.proc.wait(timeout=30) == 0
        finally:
            process.stop()
    finally:
        shutil.rmtree(repo, ignore_errors=True)
