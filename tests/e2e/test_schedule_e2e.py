"""End-to-end tests of scheduling: queue timeouts, overload and cancellation over HTTP and gRPC.

The real binary serves a temporary repository of builtin models that spin for `compute_us` per
execution on one instance, so a request can be held in the queue behind a running one. Clients
are independent: urllib and raw sockets for HTTP, Debian's python3-grpcio for gRPC (stubs
generated at test time). What the server did is read back through the statistics extension and
GET /metrics (the queue-length and busy-instance gauges, the scheduler's counters).
"""

import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import grpc
import pytest

import grpc_client_test
from brigade_process import BrigadeProcess

# How long one execution of a slow model keeps its only instance busy. Checks that a request was
# answered "at once" compare its answer with the end of that execution, not with a fixed bound,
# so a busy machine does not make them flaky.
SLOW_US = 600_000


def slow_config(name, queue_policy="", compute_us=SLOW_US):
    batching = ("dynamic_batching { default_queue_policy { %s } }" % queue_policy
                if queue_policy else "")
    return f"""
name: "{name}"
backend: "brigade"
max_batch_size: 0
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }} ]
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
parameters {{ key: "compute_us" value {{ string_value: "{compute_us}" }} }}
{batching}
"""


MODELS = {
    # Every queued request times out after 200 ms unless it asks for less.
    "slow_timeout": slow_config(
        "slow_timeout",
        "timeout_action: REJECT default_timeout_microseconds: 200000 allow_timeout_override: true"),
    # No queue timeout: only the client's own deadline applies.
    "slow_deadline": slow_config("slow_deadline"),
    # At most two requests wait; the third is refused at once.
    "slow_bounded": slow_config("slow_bounded", "max_queue_size: 2"),
    "slow_cancel": slow_config("slow_cancel"),
    "fast": slow_config("fast", compute_us=0),
}


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-schedule-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="brigade-schedule-repo-")
    for name, config in MODELS.items():
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(config)
    try:
        with BrigadeProcess(model_repository=repo, extra_args=["--pin-threads", "false"]) as proc:
            yield proc
    finally:
        shutil.rmtree(repo, ignore_errors=True)


# ---- HTTP helpers -------------------------------------------------------------------------------

def infer_body(parameters=None):
    body = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4],
                        "data": [1.0, 2.0, 3.0, 4.0]}]}
    if parameters:
        body["parameters"] = parameters
    return json.dumps(body).encode()


def http_infer(server, model, parameters=None, timeout_s=30):
    """Returns (status, headers, parsed JSON body, seconds taken)."""
    request = urllib.request.Request(f"{server.http_url}/v2/models/{model}/infer",
                                     data=infer_body(parameters),
                                     headers={"Content-Type": "application/json"})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status, headers, body = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, headers, body = error.code, error.headers, error.read()
    return status, headers, json.loads(body), time.monotonic() - start


class Background:
    """Runs `function` on a thread; result() joins it and returns its value. `finished_at` is
    time.monotonic() when the function returned."""

    def __init__(self, function, *args, **kwargs):
        self._value = None
        self._error = None
        self.finished_at = None
        self._thread = threading.Thread(target=self._run, args=(function, args, kwargs))
        self._thread.start()

    def _run(self, function, args, kwargs):
        try:
            self._value = function(*args, **kwargs)
        except BaseException as error:  # re-raised in result()
            self._error = error
        self.finished_at = time.monotonic()

    def result(self, timeout_s=30):
        self._thread.join(timeout_s)
        assert not self._thread.is_alive(), "background call did not finish"
        if self._error is not None:
            raise self._error
        return self._value


# ---- what the server reports --------------------------------------------------------------------

def metrics_text(server):
    with urllib.request.urlopen(server.http_url + "/metrics", timeout=10) as response:
        return response.read().decode()


def metric(server, name, model, **labels):
    """The value of one series of `name` for `model` version 1; 0 when the series is absent."""
    wanted = {"model": model, "version": "1", **labels}
    for line in metrics_text(server).splitlines():
        match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$", line)
        if not match or match.group(1) != name:
            continue
        series = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2)))
        if all(series.get(k) == v for k, v in wanted.items()):
            return float(match.group(3))
    return 0.0


def wait_for(predicate, what, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def wait_busy(server, model):
    """Until the model's only instance is executing."""
    wait_for(lambda: metric(server, "brigade_instances_busy", model) == 1, f"{model} to be busy")


def wait_queued(server, model, count):
    wait_for(lambda: metric(server, "nv_inference_pending_request_count", model) == count,
             f"{count} request(s) queued for {model}")


def model_stats(server, model):
    with urllib.request.urlopen(f"{server.http_url}/v2/models/{model}/stats", timeout=10) as r:
        return json.loads(r.read())["model_stats"][0]


# ---- gRPC helpers -------------------------------------------------------------------------------

def grpc_request(pb, model, parameters=None):
    request = pb.ModelInferRequest(model_name=model)
    tensor = request.inputs.add(name="INPUT0", datatype="FP32")
    tensor.shape.extend([4])
    request.raw_input_contents.append(struct.pack("<4f", 1.0, 2.0, 3.0, 4.0))
    for key, value in (parameters or {}).items():
        request.parameters[key].int64_param = value
    return request


@pytest.fixture
def grpc_stub(stubs, server):
    _, stub_module = stubs
    with grpc.insecure_channel(server.grpc_target) as channel:
        yield stub_module.GRPCInferenceServiceStub(channel)


# ---- queue timeouts -----------------------------------------------------------------------------

def test_http_queue_policy_timeout_answers_504_when_it_passes(server):
    running = Background(http_infer, server, "slow_timeout")
    wait_busy(server, "slow_timeout")
    status, headers, body, seconds = http_infer(server, "slow_timeout")
    answered_at = time.monotonic()
    assert status == 504
    assert headers["Content-Type"].startswith("application/json")
    assert "timed out" in body["error"] and "slow_timeout" in body["error"]
    assert seconds >= 0.19, seconds
    # Answered by the timer when the timeout passed, not when the running execution ended.
    assert running.result()[0] == 200
    assert answered_at < running.finished_at


def test_http_timeout_parameter_overrides_the_policy_default(server):
    running = Background(http_infer, server, "slow_timeout")
    wait_busy(server, "slow_timeout")
    status, _, body, seconds = http_infer(server, "slow_timeout", {"timeout": 20_000})
    assert status == 504, body
    assert 0.019 <= seconds < 0.15, seconds  # its own 20 ms, not the policy's 200 ms
    assert running.result()[0] == 200


def test_grpc_queue_policy_timeout_is_deadline_exceeded(server, grpc_stub, stubs):
    pb, _ = stubs
    running = Background(http_infer, server, "slow_timeout")
    wait_busy(server, "slow_timeout")
    with pytest.raises(grpc.RpcError) as error:
        grpc_stub.ModelInfer(grpc_request(pb, "slow_timeout"), timeout=30)
    answered_at = time.monotonic()
    assert error.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "timed out" in error.value.details()
    assert running.result()[0] == 200
    assert answered_at < running.finished_at


def test_grpc_client_deadline_removes_the_request_from_the_queue(server, grpc_stub, stubs):
    pb, _ = stubs
    before = model_stats(server, "slow_deadline")
    removed_before = (metric(server, "brigade_scheduler_timeouts_total", "slow_deadline") +
                      metric(server, "brigade_scheduler_cancellations_total", "slow_deadline"))
    running = Background(http_infer, server, "slow_deadline")
    wait_busy(server, "slow_deadline")
    with pytest.raises(grpc.RpcError) as error:
        grpc_stub.ModelInfer(grpc_request(pb, "slow_deadline"), timeout=0.1)
    assert error.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The server let it go when the deadline passed (it left the queue; the instance is still
    # busy with the first request), and never ran it.
    wait_queued(server, "slow_deadline", 0)
    assert metric(server, "brigade_instances_busy", "slow_deadline") == 1
    removed = (metric(server, "brigade_scheduler_timeouts_total", "slow_deadline") +
               metric(server, "brigade_scheduler_cancellations_total", "slow_deadline"))
    assert removed == removed_before + 1
    assert running.result()[0] == 200
    after = model_stats(server, "slow_deadline")
    assert after["execution_count"] == before["execution_count"] + 1


# ---- overload -----------------------------------------------------------------------------------

def test_a_full_queue_refuses_at_once_with_retry_after_and_others_are_unaffected(
        server, grpc_stub, stubs):
    pb, _ = stubs
    running = Background(http_infer, server, "slow_bounded")
    wait_busy(server, "slow_bounded")
    queued = [Background(http_infer, server, "slow_bounded") for _ in range(2)]
    wait_queued(server, "slow_bounded", 2)

    status, headers, body, _ = http_infer(server, "slow_bounded")
    assert status == 503
    assert headers["Retry-After"] == "1"
    assert "queue is full" in body["error"]

    with pytest.raises(grpc.RpcError) as error:
        grpc_stub.ModelInfer(grpc_request(pb, "slow_bounded"), timeout=30)
    assert error.value.code() == grpc.StatusCode.UNAVAILABLE
    assert dict(error.value.trailing_metadata() or ()).get("retry-after") == "1"

    # Another model answers normally meanwhile.
    status, _, body, _ = http_infer(server, "fast")
    assert status == 200 and body["outputs"][0]["data"] == [1.0, 2.0, 3.0, 4.0]
    answered_at = time.monotonic()
    # All of that happened while the first execution still ran (refusals at once, not after it),
    # and the admitted requests all complete.
    assert running.result()[0] == 200
    assert answered_at < running.finished_at
    assert [q.result()[0] for q in queued] == [200, 200]
    assert metric(server, "brigade_scheduler_refused_total", "slow_bounded",
                  reason="level_full") == 2


# ---- cancellation -------------------------------------------------------------------------------

def test_http_client_disconnect_frees_its_place_and_skips_its_work(server):
    before = model_stats(server, "slow_cancel")
    cancelled_before = metric(server, "brigade_scheduler_cancellations_total", "slow_cancel")
    running = Background(http_infer, server, "slow_cancel")
    wait_busy(server, "slow_cancel")
    body = infer_body()
    sock = socket.create_connection(("127.0.0.1", server.http_port))
    sock.sendall(b"POST /v2/models/slow_cancel/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    wait_queued(server, "slow_cancel", 1)
    sock.close()
    # Its place is freed while the instance is still busy with the first request.
    wait_queued(server, "slow_cancel", 0)
    assert metric(server, "brigade_instances_busy", "slow_cancel") == 1
    assert metric(server, "brigade_scheduler_cancellations_total",
                  "slow_cancel") == cancelled_before + 1
    assert running.result()[0] == 200
    after = model_stats(server, "slow_cancel")
    assert after["execution_count"] == before["execution_count"] + 1  # only the first ran


def test_grpc_cancel_frees_its_place_and_skips_its_work(server, grpc_stub, stubs):
    pb, _ = stubs
    before = model_stats(server, "slow_cancel")
    cancelled_before = metric(server, "brigade_scheduler_cancellations_total", "slow_cancel")
    running = Background(http_infer, server, "slow_cancel")
    wait_busy(server, "slow_cancel")
    call = grpc_stub.ModelInfer.future(grpc_request(pb, "slow_cancel"), timeout=30)
    wait_queued(server, "slow_cancel", 1)
    assert call.cancel()
    wait_queued(server, "slow_cancel", 0)
    assert metric(server, "brigade_instances_busy", "slow_cancel") == 1
    assert metric(server, "brigade_scheduler_cancellations_total",
                  "slow_cancel") == cancelled_before + 1
    assert running.result()[0] == 200
    after = model_stats(server, "slow_cancel")
    assert after["execution_count"] == before["execution_count"] + 1


# ---- the decisions on GET /metrics --------------------------------------------------------------

def test_scheduler_families_on_metrics_pass_promtool(server):
    promtool = shutil.which("promtool")  # Debian package `prometheus`
    if promtool is None:
        pytest.skip("promtool not installed")
    assert http_infer(server, "fast")[0] == 200
    text = metrics_text(server)
    # Only Brigade's scheduler families: the Triton-compatible nv_* names draw naming lints.
    ours = "".join(line + "\n" for line in text.splitlines()
                   if re.match(r"^(# (HELP|TYPE) )?brigade_scheduler_", line))
    assert metric(server, "brigade_scheduler_batch_size_count", "fast") >= 1
    assert metric(server, "brigade_scheduler_service_seconds_count", "fast") >= 1
    result = subprocess.run([promtool, "check", "metrics"], input=ours, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and result.stdout + result.stderr == "", \
        result.stdout + result.stderr
