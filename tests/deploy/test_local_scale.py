"""deploy/local/run under load: three `brigade serve` instances behind nginx with a shared Redis.

HTTP clients (http.client, keep-alive) and one gRPC client (Python grpcio, with gRPC's retry of
UNAVAILABLE; see GRPC_RETRY) send identity requests through nginx, each with its own input, and check every answer. Mid-run the test SIGKILLs
instance 0 (no drain: what was in flight on it is lost to nginx, which retries it on another
instance) and later SIGTERMs instance 1 (drain: readiness false, no new connections, in-flight
requests finish). A client-visible failure is any answer that is not 200 with the input echoed,
or any exception. Failures after the SIGTERM must be 0; failures around the SIGKILL are counted
and printed, and bounded by the requests that could be in flight on the killed process. The
shared cache: an answer stored by one instance is a hit on another.

Bounded: ~10 s of load, ~30 s in all on 2 cores. Needs nginx, redis-server and python3-grpcio.
"""

import http.client
import itertools
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from brigade_process import BRIGADE_BIN, ROOT, free_port  # noqa: E402

RUN = os.path.join(ROOT, "deploy", "local", "run")
SRC_DIR = os.path.join(ROOT, "src")
INSTANCES = 3
HTTP_CLIENTS = 4
LOAD_S = 10.0
SIGKILL_AT_S = 3.0
SIGTERM_AT_S = 6.0

IDENTITY = """
name: "{name}"
backend: "brigade"
max_batch_size: 8
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] }} ]
parameters {{ key: "op" value {{ string_value: "identity" }} }}
{cache}
"""

_unique = itertools.count(1)

# gRPC's own retry (the client's service config), for UNAVAILABLE only: the status gRPC defines
# as safe to retry. nginx cannot retry a gRPC call itself once its body started upstream, and
# cannot see a status sent in trailers: a call in flight on a SIGKILLed instance comes back as
# 502 (UNAVAILABLE), and one that reaches a draining instance between its readiness turning
# false and its gRPC listener closing is answered UNAVAILABLE "server is shutting down".
GRPC_RETRY = [
    ("grpc.enable_retries", 1),
    ("grpc.service_config", json.dumps({"methodConfig": [{
        "name": [{"service": "inference.GRPCInferenceService"}],
        "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s", "maxBackoff": "0.1s",
                        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]})),
]


@pytest.fixture(scope="module")
def repository():
    repo = tempfile.mkdtemp(prefix="brigade-local-repo-")
    for name, cache in [("ident", ""),
                        ("cached", "response_cache { enable: true tier: TIER_REDIS ttl_ms: 60000 }")]:
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(IDENTITY.format(name=name, cache=cache))
    yield repo
    shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def stubs():
    from grpc_tools import protoc  # Debian: python3-grpc-tools

    out_dir = tempfile.mkdtemp(prefix="brigade-local-stubs-")
    protos = ["protocol/grpc_service.proto", "protocol/model_config.proto"]
    command = ["grpc_tools.protoc", "-I" + SRC_DIR, "--python_out=" + out_dir,
               "--grpc_python_out=" + out_dir] + [os.path.join(SRC_DIR, p) for p in protos]
    assert protoc.main(command) == 0, "protoc failed"
    sys.path.insert(0, out_dir)
    from protocol import grpc_service_pb2, grpc_service_pb2_grpc
    yield grpc_service_pb2, grpc_service_pb2_grpc
    sys.path.remove(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)


class LocalStack:
    """deploy/local/run as a subprocess; its stdout lines are collected."""

    def __init__(self, repository):
        self.workdir = tempfile.mkdtemp(prefix="brigade-local-test-")
        self.http_port, self.grpc_port = free_port(), free_port()
        self.proc = subprocess.Popen(
            [RUN, "--instances", str(INSTANCES), "--model-repository", repository, "--workdir",
             self.workdir, "--http-port", str(self.http_port), "--grpc-port", str(self.grpc_port),
             "--brigade", BRIGADE_BIN],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.ready.wait(timeout=180) or self.proc.poll() is not None:
            self.stop()
            raise RuntimeError("deploy/local/run did not become ready:\n" + "\n".join(self.lines))
        with open(os.path.join(self.workdir, "state.json")) as f:
            self.state = json.load(f)

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if "ready:" in line:
                self.ready.set()

    def instance(self, index):
        return self.state["instances"][index]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        return self.proc.returncode

    def logs(self):
        out = ["\n".join(self.lines)]
        for name in sorted(os.listdir(self.workdir)):
            if name.endswith(".log"):
                with open(os.path.join(self.workdir, name), errors="replace") as f:
                    out.append(f"---- {name}\n{f.read()[-3000:]}")
        return "\n".join(out)


@pytest.fixture(scope="module")
def stack(request, repository):
    local = LocalStack(repository)
    try:
        yield local
    finally:
        code = local.stop()
        if request.session.testsfailed or code != 0:
            print(local.logs())
        shutil.rmtree(local.workdir, ignore_errors=True)
        assert code == 0, f"deploy/local/run exited with {code}"


def infer_body(model_input):
    return json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                                   "data": model_input}]})


def unique_input():
    n = next(_unique)
    return [float(n)] + [float(i) for i in range(15)]


def http_infer(conn, model, model_input):
    conn.request("POST", f"/v2/models/{model}/infer", body=infer_body(model_input),
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    body = response.read()
    return response.status, json.loads(body) if response.status == 200 else body


class Load:
    """Clients through nginx until `stop`; each failure is recorded with its time."""

    def __init__(self, stack, stubs):
        self.stack = stack
        self.stubs = stubs
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.ok = 0
        self.failures = []  # (seconds since start, protocol, what)
        self.start_time = time.monotonic()

    def _record(self, ok, protocol=None, what=None):
        with self.lock:
            if ok:
                self.ok += 1
            else:
                self.failures.append((time.monotonic() - self.start_time, protocol, what))

    def http_client(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.stack.http_port, timeout=30)
        while not self.stop_event.is_set():
            model_input = unique_input()
            try:
                status, answer = http_infer(conn, "ident", model_input)
                good = status == 200 and answer["outputs"][0]["data"] == model_input
                self._record(good, "http", None if good else f"{status} {answer!r:.200}")
            except (OSError, http.client.HTTPException, ValueError) as error:
                self._record(False, "http", repr(error))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.stack.http_port, timeout=30)
        conn.close()

    def grpc_client(self):
        pb, service = self.stubs
        with grpc.insecure_channel(f"127.0.0.1:{self.stack.grpc_port}",
                                   options=GRPC_RETRY) as channel:
            stub = service.GRPCInferenceServiceStub(channel)
            while not self.stop_event.is_set():
                model_input = unique_input()
                request = pb.ModelInferRequest(model_name="ident")
                tensor = request.inputs.add(name="INPUT0", datatype="FP32")
                tensor.shape.extend([1, 16])
                tensor.contents.fp32_contents.extend(model_input)
                try:
                    response = stub.ModelInfer(request, timeout=30)
                    data = list(response.outputs[0].contents.fp32_contents)
                    if not data:  # raw_output_contents: little-endian FP32
                        data = list(struct.unpack("<16f", response.raw_output_contents[0]))
                    good = data == model_input
                    self._record(good, "grpc", None if good else f"wrong answer {data}")
                except grpc.RpcError as error:
                    self._record(False, "grpc", f"{error.code()} {error.details()}")

    def run(self, events):
        """Runs the clients for LOAD_S seconds; `events` are (at_s, callable) run on the way."""
        threads = [threading.Thread(target=self.http_client) for _ in range(HTTP_CLIENTS)]
        threads.append(threading.Thread(target=self.grpc_client))
        for thread in threads:
            thread.start()
        try:
            for at_s, action in events:
                time.sleep(max(0.0, at_s - (time.monotonic() - self.start_time)))
                action()
            time.sleep(max(0.0, LOAD_S - (time.monotonic() - self.start_time)))
        finally:
            self.stop_event.set()
            for thread in threads:
                thread.join(timeout=60)


def served_count(instance, model):
    """brigade_requests_total of `model` on one instance, read directly (not through nginx)."""
    conn = http.client.HTTPConnection("127.0.0.1", instance["http_port"], timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    pattern = re.compile(r'^brigade_requests_total\{model="' + model + r'",.*\} (\S+)$', re.M)
    return sum(float(v) for v in pattern.findall(text))


def test_shared_cache_answers_on_one_instance_what_another_stored(stack):
    a, b = stack.instance(0), stack.instance(1)
    model_input = unique_input()
    conn_a = http.client.HTTPConnection("127.0.0.1", a["http_port"], timeout=10)
    conn_b = http.client.HTTPConnection("127.0.0.1", b["http_port"], timeout=10)
    status, answer = http_infer(conn_a, "cached", model_input)
    assert status == 200 and not answer.get("parameters", {}).get("cache_hit", False)
    # The store runs after the answer, on a worker: wait until B sees it (Redis is the only path).
    deadline = time.monotonic() + 5
    while True:
        status, answer_b = http_infer(conn_b, "cached", model_input)
        assert status == 200
        if answer_b.get("parameters", {}).get("cache_hit", False):
            break
        assert time.monotonic() < deadline, "instance 1 never hit what instance 0 stored"
        time.sleep(0.05)
    assert answer_b["outputs"][0]["data"] == model_input
    # Through nginx, whichever instance answers, it is a hit.
    conn = http.client.HTTPConnection("127.0.0.1", stack.http_port, timeout=10)
    for _ in range(2 * INSTANCES):
        status, answer = http_infer(conn, "cached", model_input)
        assert status == 200 and answer["parameters"]["cache_hit"] is True
    for c in (conn_a, conn_b, conn):
        c.close()


def test_sigkill_and_sigterm_under_load_through_nginx(stack, stubs):
    load = Load(stack, stubs)
    before = [served_count(stack.instance(i), "ident") for i in range(INSTANCES)]
    marks = {}
    served_at_kill = []

    def kill_instance_0():
        served_at_kill.extend(served_count(stack.instance(i), "ident") - before[i]
                              for i in range(INSTANCES))
        marks["sigkill"] = time.monotonic() - load.start_time
        os.kill(stack.instance(0)["pid"], signal.SIGKILL)

    def term_instance_1():
        marks["sigterm"] = time.monotonic() - load.start_time
        os.kill(stack.instance(1)["pid"], signal.SIGTERM)

    load.run([(SIGKILL_AT_S, kill_instance_0), (SIGTERM_AT_S, term_instance_1)])
    total = load.ok + len(load.failures)
    around_kill = [f for f in load.failures if marks["sigkill"] <= f[0] < marks["sigterm"]]
    after_term = [f for f in load.failures if f[0] >= marks["sigterm"]]
    before_kill = [f for f in load.failures if f[0] < marks["sigkill"]]
    # What nginx retried on another instance: refused connections (dead or draining instances)
    # and requests that were on an instance when it died.
    with open(os.path.join(stack.workdir, "nginx-error.log"), errors="replace") as f:
        nginx_log = f.read()
    refused = nginx_log.count("Connection refused")
    lost_in_flight = len(re.findall(r"(prematurely closed|reset by peer).*reading response header",
                                    nginx_log))
    print(f"nginx passed to the next instance: {refused} refused connections, {lost_in_flight} "
          f"requests cut off while in flight")
    print(f"requests: {total} ({load.ok} ok, {total / LOAD_S:.0f}/s through nginx); served per "
          f"instance before the SIGKILL: {served_at_kill}; client-visible failures: "
          f"{len(before_kill)} before the SIGKILL, {len(around_kill)} after the SIGKILL, "
          f"{len(after_term)} after the SIGTERM (HTTP {sum(f[1] == 'http' for f in load.failures)}, "
          f"gRPC {sum(f[1] == 'grpc' for f in load.failures)}); {load.failures[:10]}")
    # Every instance took part before anything was killed.
    assert all(count > 0 for count in served_at_kill), served_at_kill
    assert not before_kill
    assert not after_term, "a drained instance must not fail a request"
    # Only what was in flight on the killed process may fail: at most one per client. nginx
    # retries such an HTTP request (it buffered the body); the gRPC client retries its call.
    assert len(around_kill) <= HTTP_CLIENTS + 1
    assert load.ok > 100
    # Instance 1 drained and exited 0; instance 0 died of the SIGKILL; instance 2 served on.
    deadline = time.monotonic() + 30
    wanted = [f"instance 0 (pid {stack.instance(0)['pid']}) exited with status -9",
              f"instance 1 (pid {stack.instance(1)['pid']}) exited with status 0"]
    while not all(any(w in line for line in stack.lines) for w in wanted):
        assert time.monotonic() < deadline, stack.lines
        time.sleep(0.1)
    assert served_count(stack.instance(2), "ident") > before[2]
