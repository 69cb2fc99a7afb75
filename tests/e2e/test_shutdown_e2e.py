"""End-to-end tests of `brigade serve`'s shutdown and connection limits: the real binary, raw
sockets and Python grpcio as clients.

Shutdown on SIGTERM: readiness turns false at once while everything is still served for
--drain-delay-secs; then the front ends drain (what is already in a socket is answered, the last
answer with `Connection: close`); one deadline, --exit-timeout-secs after the signal, bounds it
all, and what it cuts off is answered 503, counted in the log and makes the exit status 2.
"""

import os
import re
import shutil
import socket
import tempfile
import threading
import time

import pytest

import grpc_client_test
from brigade_process import BrigadeProcess

# An identity model that spins `compute_us` per request on one instance: requests queue.
SLOW_MODEL = """
backend: "brigade"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
parameters { key: "compute_us" value { string_value: "%d" } }
"""

BODY = b'{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[4],"data":[1,2,3,4]}]}'
REQUEST = (b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
           b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)


@pytest.fixture
def slow_repository():
    repos = []

    def make(compute_us):
        repo = tempfile.mkdtemp(prefix="brigade-shutdown-")
        repos.append(repo)
        os.makedirs(os.path.join(repo, "slow", "1"))
        with open(os.path.join(repo, "slow", "config.pbtxt"), "w") as f:
            f.write(SLOW_MODEL % compute_us)
        return repo

    yield make
    for repo in repos:
        shutil.rmtree(repo, ignore_errors=True)


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_response(sock):
    """One HTTP response: (status, headers with lower-case names, body); None on EOF/reset."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            rest += chunk
        return status, headers, rest[:length]
    except (ConnectionError, socket.timeout):
        return None


def http_get_status(port, path):
    with connect(port) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        response = read_response(sock)
        return None if response is None else response[0]


def infer_request(pb):
    request = pb.ModelInferRequest(model_name="slow")
    tensor = request.inputs.add()
    tensor.name, tensor.datatype = "INPUT0", "FP32"
    tensor.shape.append(4)
    request.raw_input_contents.append(bytes(16))
    return request


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-shutdown-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


def test_sigterm_loses_no_request_sent_around_it(slow_repository, stubs):
    """D5: 12 HTTP requests sent 1-12 ms before the SIGTERM, 4 gRPC calls just before it, 2 new
    connections during the drain delay, and 2 requests whose head was half sent before the drain
    began and finished after it: every one is answered 200 (the last on each drained connection
    with `Connection: close`), readiness is false during the delay, and the exit status is 0."""
    import grpc

    pb, stub_module = stubs
    delay_s = 1.0
    process = BrigadeProcess(model_repository=slow_repository(20_000),
                             extra_args=["--drain-delay-secs", str(delay_s),
                                         "--exit-timeout-secs", "30"]).start()
    early, partial, late = [], [], []
    try:
        port = process.http_port
        early = [connect(port) for _ in range(12)]
        partial = [connect(port) for _ in range(2)]
        for sock in early + partial:  # each connection is established and has served once
            sock.sendall(REQUEST)
            assert read_response(sock)[0] == 200
        channel = grpc.insecure_channel(process.grpc_target)
        stub = stub_module.GRPCInferenceServiceStub(channel)
        assert stub.ServerReady(pb.ServerReadyRequest(), timeout=5).ready

        for sock in partial:
            sock.sendall(REQUEST[:20])
        grpc_calls = [stub.ModelInfer.future(infer_request(pb), timeout=30) for _ in range(4)]
        for sock in early:
            sock.sendall(REQUEST)
            time.sleep(0.001)
        process.proc.send_signal(15)
        signalled = time.monotonic()

        # The drain delay: unready within moments of the signal, yet a new connection is served.
        while http_get_status(port, "/v2/health/ready") != 400:  # Triton: not ready is 400
            assert time.monotonic() - signalled < 0.3, "still ready after the signal"
            time.sleep(0.005)
        late = [connect(port) for _ in range(2)]
        for sock in late:
            sock.sendall(REQUEST)
        # The rest of the half-sent heads arrives once the drain has begun.
        time.sleep(max(0.0, delay_s + 0.3 - (time.monotonic() - signalled)))
        for sock in partial:
            sock.sendall(REQUEST[20:])

        statuses = {}
        for name, socks in (("early", early), ("late", late), ("partial", partial)):
            statuses[name] = []
            for sock in socks:
                response = read_response(sock)
                statuses[name].append(None if response is None else response[0])
        partial_close = [read_response(sock) is None for sock in partial]
        grpc_ok = sum(1 for call in grpc_calls if call.exception() is None)
        channel.close()
        assert statuses == {"early": [200] * 12, "late": [200] * 2, "partial": [200] * 2}
        assert partial_close == [True, True], "drained connections close after their answer"
        assert grpc_ok == 4
        assert process.proc.wait(timeout=30) == 0
        print(f"answered {sum(len(v) for v in statuses.values())} HTTP, {grpc_ok} gRPC; "
              f"exit 0 after {time.monotonic() - signalled:.2f} s")
    finally:
        process.stop()
        for sock in early + partial + late:
            sock.close()


def test_exit_timeout_is_one_deadline_and_cut_requests_get_503(slow_repository):
    """D6: a 5 s request and --exit-timeout-secs 1 (with a 0.4 s drain delay inside it): the
    request is answered 503 at the deadline, the log counts it, the exit status is 2, and the
    process is gone within the deadline plus a margin for exiting, not after each phase's own
    timeout in turn."""
    process = BrigadeProcess(model_repository=slow_repository(5_000_000),
                             extra_args=["--drain-delay-secs", "0.4",
                                         "--exit-timeout-secs", "1"]).start()
    try:
        with connect(process.http_port) as sock:
            sock.sendall(REQUEST)
            time.sleep(0.2)  # the request is running
            process.proc.send_signal(15)
            signalled = time.monotonic()
            response = read_response(sock)
            code = process.proc.wait(timeout=30)
            took = time.monotonic() - signalled
        assert response is not None and response[0] == 503, response
        assert b"shutting down" in response[2]
        assert code == 2
        assert took < 1.0 + 1.0, f"exited {took:.2f} s after the signal"
        logs = process.logs()
        assert re.search(r"requests were cut off: 1 HTTP requests answered 503, 1 requests",
                         logs), logs
        print(f"cut request answered 503; exit 2 after {took:.2f} s (deadline 1 s)")
    finally:
        process.stop()


def test_connections_over_the_limit_get_503_and_are_counted(slow_repository):
    process = BrigadeProcess(model_repository=slow_repository(1_000),
                             extra_args=["--http-max-connections", "2"]).start()
    try:
        first, second = connect(process.http_port), connect(process.http_port)
        for sock in (first, second):
            sock.sendall(REQUEST)
            assert read_response(sock)[0] == 200
        with connect(process.http_port) as third:
            refused = read_response(third)
        assert refused is not None and refused[0] == 503, refused
        assert refused[1].get("connection") == "close"
        first.sendall(b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        status, _, body = read_response(first)
        assert status == 200
        assert 'brigade_http_connections_refused_total{port="http"} 1' in body.decode(), body
        first.close()
        second.close()
    finally:
        process.stop()


def test_a_head_trickled_byte_by_byte_is_cut_at_the_header_timeout(slow_repository):
    process = BrigadeProcess(model_repository=slow_repository(1_000),
                             extra_args=["--http-header-timeout-secs", "0.5"]).start()
    try:
        with connect(process.http_port) as sock:
            started = time.monotonic()
            response = None
            sock.settimeout(0.1)
            for byte in REQUEST[:60]:
                try:
                    sock.sendall(bytes([byte]))
                except (BrokenPipeError, ConnectionResetError):
                    break
                try:
                    if sock.recv(1, socket.MSG_PEEK):
                        break
                except socket.timeout:
                    pass
            sock.settimeout(5)
            response = read_response(sock)
            took = time.monotonic() - started
        assert response is not None and response[0] == 408, response
        assert 0.5 <= took < 5.0, took
    finally:
        process.stop()
