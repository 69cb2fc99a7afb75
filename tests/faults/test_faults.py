"""Fault and overload suite: the real binary under hostile load, each case printing its counts.

Each case starts its own `brigade serve` on a temporary repository (so one case's damage cannot
leak into the next), drives it with independent clients (raw sockets and http.client from Python,
and `brigade bench` in its own process as the open-loop load generator), and checks that the
server sheds or fails the one request at fault, keeps serving everyone else, stays bounded in
memory and comes back at once. The Redis outage case lives with the other Redis tests
(tests/e2e/test_cache_e2e.py, test_redis_killed_under_load_fails_no_request_and_recovers).

The load generator shares the two cores with the server, so the checks compare what the server
did with what it was offered in the same run (fractions of measured capacity, latencies of
refusals against the model's own service time), never with absolute rates.
"""

import http.client
import json
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from brigade_process import BRIGADE_BIN, BrigadeProcess  # noqa: E402

# One execution of the spinning model: its single instance serves at most 1 / SPIN_US requests
# per second, which sets the capacity the overload cases multiply.
SPIN_US = 2000
QUEUE_BOUND = 4


def builtin_config(name, compute_us, queue_bound=None):
    batching = ("dynamic_batching { default_queue_policy { max_queue_size: %d } }" % queue_bound
                if queue_bound else "")
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


def write_repository(models):
    repo = tempfile.mkdtemp(prefix="brigade-faults-repo-")
    for name, (config, files) in models.items():
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(config)
        for relative, write in files.items():
            write(os.path.join(repo, name, relative))
    return repo


@pytest.fixture
def served():
    """Yields start(models, extra_args) -> BrigadeProcess; stops the server and removes the
    repository afterwards, whatever the test did to them."""
    started = []

    def start(models, extra_args=()):
        repo = write_repository(models)
        proc = BrigadeProcess(model_repository=repo,
                              extra_args=["--pin-threads", "false", *extra_args])
        started.append((proc, repo))
        return proc.start()

    yield start
    for proc, repo in started:
        proc.stop()
        shutil.rmtree(repo, ignore_errors=True)


INFER_BODY = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4],
                                     "data": [1.0, 2.0, 3.0, 4.0]}]}).encode()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def bench(server, model, *args, timeout_s=120):
    """Runs `brigade bench` against `server` in its own process; returns its JSON report."""
    out = subprocess.run(
        [BRIGADE_BIN, "bench", "-m", model, "-u", f"127.0.0.1:{server.http_port}", "-f", "json",
         "--no-progress", "--no-server-stats", "--warmup-s", "0", *args],
        capture_output=True, text=True, timeout=timeout_s)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def closed_loop_rate(server, model, seconds, concurrency=2):
    level = bench(server, model, "--concurrency", str(concurrency), "--duration-s",
                  str(seconds))["levels"][0]
    return level["throughput_per_s"], level


class Probe:
    """Sends one request at a time on a keep-alive connection and records (status, seconds)."""

    def __init__(self, server, model):
        self.server, self.model = server, model
        self.results = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=10)
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                conn.request("POST", f"/v2/models/{self.model}/infer", INFER_BODY,
                             {"Content-Type": "application/json"})
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                status = -1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.server.http_port,
                                                  timeout=10)
            self.results.append((status, time.perf_counter() - start))
            time.sleep(0.002)
        conn.close()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=30)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else float("nan")


def test_open_loop_at_three_times_capacity_sheds_the_excess_fast_and_recovers(served):
    server = served({"spin": (builtin_config("spin", SPIN_US, QUEUE_BOUND), {})})
    capacity, _ = closed_loop_rate(server, "spin", 2)
    baseline_rss = rss_kib(server.proc.pid)

    rss_samples = []
    done = threading.Event()

    def sample_rss():
        while not done.wait(0.05):
            rss_samples.append(rss_kib(server.proc.pid))

    sampler = threading.Thread(target=sample_rss)
    sampler.start()
    try:
        with Probe(server, "spin") as probe:
            report = bench(server, "spin", "--rate", str(int(3 * capacity)), "--arrival",
                           "poisson", "--duration-s", "4", "--open-loop-workers", "64",
                           "--seed", "7")
    finally:
        done.set()
        sampler.join()
    level = report["levels"][0]
    # Full throughput within 2 s of the overload: the better of its first two 1 s windows.
    after_at_once = max(closed_loop_rate(server, "spin", 1)[0] for _ in range(2))
    # The same measurement a moment later, under the same load from the rest of the machine: a
    # spin model's rate follows the CPU it gets, which other processes on a 2-core machine move.
    settled, _ = closed_loop_rate(server, "spin", 2)

    refused = [s for status, s in probe.results if status == 503]
    admitted = [s for status, s in probe.results if status == 200]
    other = [status for status, _ in probe.results if status not in (200, 503)]
    error_kinds = {kind: e["count"] for kind, e in level["errors"].items()}
    peak_rss = max(rss_samples, default=baseline_rss)
    print(f"capacity {capacity:.0f}/s, offered {3 * capacity:.0f}/s: {level['ok']} answered "
          f"({level['throughput_per_s']:.0f}/s), refused {error_kinds}, unsent "
          f"{level['unsent']}; admitted service p99 {level['service_us']['p99']:.0f} us; probe: "
          f"{len(refused)} refusals p50 {percentile(refused, 50) * 1e6:.0f} us p99 "
          f"{percentile(refused, 99) * 1e6:.0f} us, {len(admitted)} admitted; RSS "
          f"{baseline_rss} -> peak {peak_rss} KiB; after: {after_at_once:.0f}/s within 2 s, "
          f"{settled:.0f}/s settled")

    # The excess is refused with 503 (and nothing else goes wrong), the instance stays busy.
    assert set(error_kinds) == {"UNAVAILABLE (HTTP 503)"}, level["errors"]
    assert error_kinds["UNAVAILABLE (HTTP 503)"] > level["ok"] / 2
    assert level["throughput_per_s"] > 0.7 * capacity
    assert other == []
    # A refusal does not wait for the model: it comes back in well under one execution.
    assert refused and percentile(refused, 50) < SPIN_US * 1e-6 / 2
    # What is admitted waits at most for the bounded queue ahead of it, plus scheduling noise.
    assert level["service_us"]["p99"] < (QUEUE_BOUND + 1) * SPIN_US * 4
    assert peak_rss - baseline_rss < 64 * 1024
    # Recovery: within 2 s of the overload the server runs as fast as it does once settled, and
    # is not lastingly slowed (loosely: the machine's other load moves this one too).
    assert after_at_once > 0.8 * settled
    assert settled > 0.5 * capacity


def test_two_thousand_idle_connections_leave_service_unharmed(served):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2000 + 512
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= wanted, "raise the fd limit"
    server = served({"fast": (builtin_config("fast", 0), {})})
    quiet_rate, _ = closed_loop_rate(server, "fast", 1)

    idle = []
    try:
        for i in range(2000):
            sock = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
            if i % 2:
                # Half of them have started a request and stopped mid-header.
                sock.sendall(b"POST /v2/models/fast/infer HTTP/1.1\r\nHost: x\r\n")
            idle.append(sock)
        busy_rate, level = closed_loop_rate(server, "fast", 2)
        fds = len(os.listdir(f"/proc/{server.proc.pid}/fd"))
    finally:
        for sock in idle:
            sock.close()
    print(f"2000 idle connections: {busy_rate:.0f}/s beside them against {quiet_rate:.0f}/s "
          f"alone, {level['failed']} failed, server fds {fds}")
    assert level["failed"] == 0, level["errors"]
    assert busy_rate > 0.5 * quiet_rate
    assert server.proc.poll() is None


def test_sigterm_under_load_answers_every_admitted_request_and_exits_zero(served):
    server = served({"spin": (builtin_config("spin", SPIN_US), {})})
    outcomes = {"ok": 0, "failed": [], "idle_closed": 0}
    lock = threading.Lock()
    stop = threading.Event()

    def load():
        # A new connection whenever the server closes one, as a client behind a load balancer
        # would; a refused connect after the listener closed is not a lost request.
        while not stop.is_set():
            try:
                conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
                conn.connect()
            except OSError:
                return
            answered_here = 0
            try:
                while not stop.is_set():
                    conn.request("POST", "/v2/models/spin/infer", INFER_BODY,
                                 {"Content-Type": "application/json"})
                    response = conn.getresponse()
                    response.read()
                    answered_here += 1
                    with lock:
                        if response.status == 200:
                            outcomes["ok"] += 1
                        else:
                            outcomes["failed"].append(response.status)
                    if response.getheader("Connection", "").lower() == "close":
                        break
            except (http.client.RemoteDisconnected, ConnectionResetError,
                    BrokenPipeError) as error:
                # A kept-alive connection the drain closed as idle while this request was on its
                # way: the server never read it (HTTP clients retry these, on a new connection).
                # On a new connection it would have been read and must have been answered.
                with lock:
                    if answered_here > 0:
                        outcomes["idle_closed"] += 1
                    else:
                        outcomes["failed"].append(repr(error))
            except (OSError, http.client.HTTPException) as error:
                # Sent and never answered: the request was lost.
                with lock:
                    outcomes["failed"].append(repr(error))
            finally:
                conn.close()

    threads = [threading.Thread(target=load) for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    server.proc.send_signal(signal.SIGTERM)
    try:
        code = server.proc.wait(timeout=60)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    print(f"SIGTERM under load: {outcomes['ok']} answered, {len(outcomes['failed'])} failed "
          f"{outcomes['failed'][:5]}, {outcomes['idle_closed']} sent on a connection closed as "
          f"idle, exit {code}")
    # Exit 0: no request the server read was cut at its deadline (it exits 2 when one is).
    assert code == 0, server.logs()
    assert outcomes["ok"] > 100
    assert outcomes["failed"] == []


# Slowloris: short timeouts so the case is bounded (the defaults are 10 s, 30 s and 60 s).
HEADER_TIMEOUT_S, READ_TIMEOUT_S, IDLE_TIMEOUT_S = 1.0, 2.0, 2.0
SLOW_PER_KIND = 100
TRICKLE_INTERVAL_S = 0.2


class SlowConnection:
    """One slowloris connection: sends `preamble` at once, then trickles `script` a byte per
    round (repeating `tail` after it, so it never completes), and records when the server
    answered it or closed it."""

    def __init__(self, port, kind, script, tail, preamble=b""):
        self.kind, self.script, self.tail = kind, script, tail
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.opened = time.monotonic()
        self.first_byte = None
        if preamble:
            self.sock.sendall(preamble)
            self.first_byte = time.monotonic()
        self.sock.setblocking(False)
        self.sent = 0
        self.answer = b""
        self.ended = None  # seconds after the timeout's start: first answer byte or close

    def start(self):
        # The timeout that should end it starts at the first byte (header, read) or at accept.
        return self.first_byte if self.first_byte is not None else self.opened

    def trickle(self):
        if self.ended is not None or self.kind == "idle":
            return
        data = self.script if self.sent < len(self.script) else self.tail
        at = self.sent if self.sent < len(self.script) else (self.sent - len(self.script)) % len(
            self.tail)
        try:
            self.sock.send(data[at:at + 1])
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._end()
            return
        if self.first_byte is None:
            self.first_byte = time.monotonic()
        self.sent += 1

    def poll(self):
        if self.ended is not None:
            return
        try:
            chunk = self.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        self.answer += chunk
        self._end()

    def _end(self):
        self.ended = time.monotonic() - self.start()
        self.sock.close()


def test_slowloris_connections_are_closed_by_their_timeouts_while_load_keeps_its_pace(served):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 3 * SLOW_PER_KIND + 512:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(3 * SLOW_PER_KIND + 512, hard), hard))
    server = served({"fast": (builtin_config("fast", 0), {})}, [
        "--http-header-timeout-secs", str(HEADER_TIMEOUT_S),
        "--http-read-timeout-secs", str(READ_TIMEOUT_S),
        "--http-idle-timeout-secs", str(IDLE_TIMEOUT_S)])
    quiet_rate, quiet = closed_loop_rate(server, "fast", 1)

    head = b"POST /v2/models/fast/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    slow = []
    for _ in range(SLOW_PER_KIND):
        # Headers a byte at a time, never ending (a new header line after another).
        slow.append(SlowConnection(server.http_port, "header", head, b"X-Slow: 1\r\n"))
        # A complete head promising a body that then comes a byte at a time, never finishing.
        slow.append(SlowConnection(server.http_port, "body", b"0", b"0",
                                   preamble=head + b"Content-Length: 100000\r\n\r\n"))
        # Connected and silent.
        slow.append(SlowConnection(server.http_port, "idle", b"", b""))
    stop = threading.Event()

    def trickle():
        while not stop.is_set():
            for conn in slow:
                conn.trickle()
            readable, _, _ = select.select([c.sock for c in slow if c.ended is None], [], [],
                                           TRICKLE_INTERVAL_S)
            ready = set(readable)
            for conn in slow:
                if conn.ended is None and conn.sock in ready:
                    conn.poll()

    trickler = threading.Thread(target=trickle)
    trickler.start()
    try:
        busy_rate, busy = closed_loop_rate(server, "fast", 3)
        # Every slow connection must be over by its timeout plus slack; wait no longer.
        deadline = time.monotonic() + max(HEADER_TIMEOUT_S, READ_TIMEOUT_S, IDLE_TIMEOUT_S) + 3
        while time.monotonic() < deadline and any(c.ended is None for c in slow):
            time.sleep(0.1)
    finally:
        stop.set()
        trickler.join(timeout=30)
        for conn in slow:
            if conn.ended is None:
                conn.sock.close()

    def summary(kind):
        ended = sorted(c.ended for c in slow if c.kind == kind and c.ended is not None)
        answered_408 = sum(1 for c in slow if c.kind == kind and c.answer.startswith(
            b"HTTP/1.1 408"))
        return ended, answered_408

    report = {kind: summary(kind) for kind in ("header", "body", "idle")}
    print(f"slowloris: {3 * SLOW_PER_KIND} slow connections beside the load; "
          + "; ".join(f"{kind}: {len(ended)}/{SLOW_PER_KIND} closed ({answered} answered 408), "
                      f"after {percentile(ended, 50):.2f} s p50 {percentile(ended, 100):.2f} s max"
                      for kind, (ended, answered) in report.items())
          + f"; load {busy_rate:.0f}/s p99 {busy['latency_us']['p99']:.0f} us beside them "
          f"against {quiet_rate:.0f}/s p99 {quiet['latency_us']['p99']:.0f} us alone, "
          f"{busy['failed']} failed")

    timeouts = {"header": HEADER_TIMEOUT_S, "body": READ_TIMEOUT_S, "idle": IDLE_TIMEOUT_S}
    for kind, (ended, answered) in report.items():
        # Each is closed by its own timeout (trickling does not extend it), not before.
        assert len(ended) == SLOW_PER_KIND, (kind, len(ended))
        assert ended[0] > 0.8 * timeouts[kind], (kind, ended[0])
        assert ended[-1] < timeouts[kind] + 2.5, (kind, ended[-1])
    # A request that began and was not finished in time is told so. The header case always
    # reads its 408; in the body case about 1 in 100 clients lose it: the server closes with the
    # client's trickled bytes unread, so the kernel resets the connection and the client may drop
    # the 408 already in its buffer (a lingering close on the read-timeout path would fix that;
    # not done yet).
    assert report["header"][1] == SLOW_PER_KIND
    assert report["body"][1] >= 0.95 * SLOW_PER_KIND, report["body"][1]
    # The load beside them keeps its pace.
    assert busy["failed"] == 0, busy["errors"]
    assert busy_rate > 0.5 * quiet_rate
    assert busy["latency_us"]["p99"] < max(5 * quiet["latency_us"]["p99"], 20_000)
    assert server.proc.poll() is None


# ---- models that fail -------------------------------------------------------------------------

def write_torchscript(kind):
    def write(path):
        script = f"""
import sys, torch
class Faulty(torch.nn.Module):
    def forward(self, x):
        if {kind!r} == "throws" and bool((x < 0).any()):
            raise RuntimeError("negative input")
        if {kind!r} == "wrong_shape" and bool((x < 0).any()):
            return x[:, :2]
        return x * 2
torch.jit.script(Faulty()).save(sys.argv[1])
"""
        # TorchScript compiles from source, so the module must live in a file, not in `-c`.
        source = path + ".py"
        with open(source, "w") as f:
            f.write(script)
        try:
            subprocess.run(["/usr/bin/python3", source, path], check=True, timeout=120)
        finally:
            os.unlink(source)
    return write


def torch_config(name):
    return f"""
name: "{name}"
platform: "pytorch_libtorch"
max_batch_size: 8
input [ {{ name: "INPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }} ]
output [ {{ name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 4 ] }} ]
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
"""


def infer(server, model, values):
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    try:
        conn.request("POST", f"/v2/models/{model}/infer", json.dumps(
            {"inputs": [{"name": "INPUT__0", "datatype": "FP32", "shape": [1, 4],
                         "data": values}]}), {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


@pytest.mark.parametrize("kind", ["throws", "wrong_shape"])
def test_a_failing_model_fails_that_request_clearly_and_keeps_serving(served, kind):
    server = served({kind: (torch_config(kind), {"1/model.pt": write_torchscript(kind)})})
    counts = {"ok": 0, "failed": 0, "wrong": 0}
    messages = set()
    for i in range(60):
        bad = i % 3 == 0
        values = [-1.0, 2.0, 3.0, 4.0] if bad else [1.0, 2.0, 3.0, float(i)]
        status, body = infer(server, kind, values)
        if bad:
            counts["failed"] += status >= 400
            counts["wrong"] += status < 400
            messages.add(body.get("error", ""))
            assert 400 <= status < 600 and body.get("error"), (status, body)
        else:
            counts["ok"] += status == 200
            counts["wrong"] += status != 200
            if status == 200:
                assert body["outputs"][0]["data"] == [2 * v for v in values]
    print(f"{kind}: {counts}, errors {sorted(messages)[:2]}")
    assert counts == {"ok": 40, "failed": 20, "wrong": 0}
    # The error says what went wrong, not just "internal".
    expected = "negative input" if kind == "throws" else "OUTPUT__0"
    assert all(expected in message for message in messages), messages
    assert server.proc.poll() is None
