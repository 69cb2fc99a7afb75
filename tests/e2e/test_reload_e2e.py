"""Zero-loss model updates under load (issue 20, item 1).

Open-loop traffic at 70% of the measured capacity of a spinning model runs while the model is
swapped, in poll mode (new version directories appear the way a copy makes them, the config
changes) and in explicit mode (loads through the repository API that switch versions, unloads
and loads of another model). Each case counts failed requests (must be 0), checks every answer
(the values sent back, from a version that was asked for), that requests in flight on the old
version finish on it, and compares the p99 during the swaps with the steady state's.

A last case cycles a model through 1,000 unloads and loads and compares its per-request cost
(server CPU from /proc/PID/stat, client round trip) and the server's resident memory
(/proc/PID/status VmRSS) before and after.

Everything shares two cores with the load generator (Python threads here, `brigade bench` for the
capacity), so every check compares numbers measured in the same run, never absolute rates. The
numbers are printed (pytest -rP) and recorded in bench/results/deploy.md.
"""

import http.client
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request

import pytest

from brigade_process import BRIGADE_BIN, BrigadeProcess

# One execution of the spinning model; its single instance serves at most 1 / SPIN_US requests a
# second: the capacity the load is a fraction of.
SPIN_US = 4000
LOAD_FRACTION = 0.7
SWAPS = 20
STEADY_S = 4.0
CLK_TCK = os.sysconf("SC_CLK_TCK")


def spin_config(name, version_policy="latest { num_versions: 1 }", generation=0):
    # model.bin is the version's model file (the builtin backend only checks it exists): a
    # version directory without it yet is one being copied. The warm-up runs before a version
    # takes traffic; `generation` changes the config without changing what it computes.
    return f"""
name: "{name}"
backend: "brigade"
max_batch_size: 0
default_model_filename: "model.bin"
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }} ]
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
version_policy {{ {version_policy} }}
parameters {{ key: "compute_us" value {{ string_value: "{SPIN_US}" }} }}
parameters {{ key: "generation" value {{ string_value: "{generation}" }} }}
model_warmup [ {{ name: "zeros" batch_size: 0 count: 3
  inputs {{ key: "INPUT0" value {{ data_type: TYPE_FP32 dims: [ 4 ] zero_data: true }} }} }} ]
"""


FAST_CONFIG = """
name: "fast"
backend: "brigade"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
"""


def write_version(repo, name, version):
    directory = os.path.join(repo, name, str(version))
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "model.bin"), "w") as f:
        f.write("builtin\n")


def write_config(repo, name, text):
    # As a deployment tool does it: written aside, renamed into place.
    path = os.path.join(repo, name, "config.pbtxt")
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


@pytest.fixture
def repo():
    path = tempfile.mkdtemp(prefix="brigade-reload-repo-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def infer_body(value):
    return json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4],
                                   "data": [value, value + 1, value + 2, value + 3]}]}).encode()


def post(server, path, body=b"{}", timeout=60):
    request = urllib.request.Request(server.http_url + path, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def get_status(server, path):
    try:
        with urllib.request.urlopen(server.http_url + path, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def bench_capacity(server, model):
    out = subprocess.run(
        [BRIGADE_BIN, "bench", "-m", model, "-u", f"127.0.0.1:{server.http_port}", "-f", "json",
         "--no-progress", "--no-server-stats", "--warmup-s", "1", "--concurrency", "2",
         "--duration-s", "2"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["levels"][0]["throughput_per_s"]


class OpenLoop:
    """Open-loop traffic: arrival i is due at start + i / rate whatever happened to the others.
    Arrivals are dealt round-robin to `workers` threads, each on its own keep-alive connection,
    and latency counts from the due time (a late send is the server's delay too). Each record:
    (due, done, status, version or error text, answer correct)."""

    def __init__(self, server, model, rate, workers=24):
        self.server, self.model, self.rate, self.workers = server, model, rate, workers
        self.records = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(w,)) for w in range(workers)]

    def _run(self, worker):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=30)
        i = worker
        mine = []
        while not self._stop.is_set():
            due = self.start + i / self.rate
            i += self.workers
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            value = float(i % 1000)
            try:
                conn.request("POST", f"/v2/models/{self.model}/infer", infer_body(value),
                             {"Content-Type": "application/json"})
                response = conn.getresponse()
                body = response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as e:
                status, body = -1, str(e).encode()
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=30)
            done = time.monotonic()
            if status == 200:
                answer = json.loads(body)
                correct = answer["outputs"][0]["data"] == [value, value + 1, value + 2, value + 3]
                mine.append((due, done, status, answer["model_version"], correct))
            else:
                mine.append((due, done, status, body.decode(errors="replace")[:200], False))
        conn.close()
        with self._lock:
            self.records.extend(mine)

    def __enter__(self):
        self.start = time.monotonic() + 0.05
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else float("nan")


def wait_until(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def check_and_report(name, traffic, steady_until, swaps, capacity, extra=""):
    """`swaps`: (start, end, old_version, new_version) in time.monotonic()."""
    records = sorted(traffic.records)
    failed = [r for r in records if r[2] != 200]
    wrong = [r for r in records if r[2] == 200 and not r[4]]
    # An answer names a version the test asked for: the one loaded before the swaps began or
    # one of the swaps' (never one half loaded, which the test never made ready).
    allowed = {str(swaps[0][2])} | {str(s[3]) for s in swaps}
    strangers = [r for r in records if r[2] == 200 and r[3] not in allowed]
    # Sent while the swap ran and answered after it ended, by the old version: they were in
    # flight or queued on it when it retired.
    finished_on_old = 0
    for start, end, old, new in swaps:
        if old == new:
            continue
        finished_on_old += sum(1 for r in records if r[2] == 200 and r[3] == str(old) and
                               start <= r[0] <= end <= r[1])
    steady = [r[1] - r[0] for r in records if traffic.start + 1.0 <= r[0] < steady_until]
    # During a swap: due from its start to 0.2 s after it ended.
    during = [r[1] - r[0] for r in records
              if any(start <= r[0] <= end + 0.2 for start, end, _, _ in swaps)]
    swap_s = [end - start for start, end, _, _ in swaps]
    p99_steady, p99_swap = percentile(steady, 99), percentile(during, 99)
    print(f"{name}: capacity {capacity:.0f}/s, offered {traffic.rate:.0f}/s; {len(records)} "
          f"requests, {len(failed)} failed, {len(wrong)} wrong, {len(strangers)} from unknown "
          f"versions; {len(swaps)} swaps (each {percentile(swap_s, 50) * 1e3:.0f} ms median, "
          f"{max(swap_s) * 1e3:.0f} ms max), {finished_on_old} sent during a swap and answered after it "
          f"by the retiring version; p50/p99 steady {percentile(steady, 50) * 1e3:.1f}/"
          f"{p99_steady * 1e3:.1f} ms ({len(steady)} requests), during swaps "
          f"{percentile(during, 50) * 1e3:.1f}/{p99_swap * 1e3:.1f} ms ({len(during)} requests), "
          f"ratio {p99_swap / p99_steady:.2f}{extra}")
    assert failed == [], failed[:5]
    assert wrong == [], wrong[:5]
    assert strangers == [], strangers[:5]
    assert len(swaps) >= SWAPS
    assert len(during) > 0 and len(steady) > 0
    return p99_steady, p99_swap


def assert_p99(p99_steady, p99_swap):
    # The goal is 2x (printed above). The bound is looser: on two shared cores a new version's
    # warm-up (3 runs of SPIN_US) takes the core the load generator and the HTTP threads would
    # otherwise have, and one scheduler tick of another process is several SPIN_US.
    assert p99_swap <= 3 * p99_steady + 0.010, (p99_steady, p99_swap)


def test_poll_mode_swaps_under_load_lose_no_request(repo):
    os.makedirs(os.path.join(repo, "spin"))
    write_config(repo, "spin", spin_config("spin"))
    write_version(repo, "spin", 1)
    with BrigadeProcess(model_repository=repo,
                        extra_args=["--pin-threads", "false", "--model-control-mode", "poll",
                                    "--repository-poll-secs", "1"]) as server:
        capacity = bench_capacity(server, "spin")
        swaps = []
        half_copied = 0
        with OpenLoop(server, "spin", LOAD_FRACTION * capacity) as traffic:
            time.sleep(STEADY_S)
            steady_until = time.monotonic()
            version, generation = 1, 0
            for k in range(SWAPS):
                start = time.monotonic()
                if k % 4 == 3:
                    # A config change: every served version reloads in place.
                    generation += 1
                    write_config(repo, "spin", spin_config("spin", generation=generation))
                    old = new = version
                    # Same version number: done when the server's log says it reloaded.
                    count = server.logs().count(f"model 'spin' version {version}: ready")
                    wait_until(lambda: server.logs().count(
                        f"model 'spin' version {version}: ready") > count, 10, "config reload")
                else:
                    old, new = version, version + 1
                    directory = os.path.join(repo, "spin", str(new))
                    os.makedirs(directory)
                    if k % 4 == 1:
                        # A slow copy: the directory exists through at least one scan before
                        # its model file does.
                        time.sleep(1.2)
                        half_copied += 1
                    write_version(repo, "spin", new)
                    wait_until(lambda: get_status(server, f"/v2/models/spin/versions/{new}/ready")
                               == 200, 10, f"version {new}")
                    wait_until(lambda: get_status(server, f"/v2/models/spin/versions/{old}/ready")
                               != 200, 10, f"version {old} retired")
                    shutil.rmtree(os.path.join(repo, "spin", str(old)))
                    version = new
                end = time.monotonic()
                swaps.append((start, end, old, new))
                time.sleep(0.2)
            time.sleep(0.5)
        p99_steady, p99_swap = check_and_report(
            "poll", traffic, steady_until, swaps, capacity,
            f"; {half_copied} version directories seen before their model file")
        assert_p99(p99_steady, p99_swap)


def test_explicit_mode_loads_and_unloads_under_load_lose_no_request(repo):
    os.makedirs(os.path.join(repo, "spin"))
    write_config(repo, "spin", spin_config("spin", "specific { versions: [ 1 ] }"))
    for version in (1, 2):
        write_version(repo, "spin", version)
    os.makedirs(os.path.join(repo, "fast", "1"))
    write_config(repo, "fast", FAST_CONFIG)
    with BrigadeProcess(model_repository=repo,
                        extra_args=["--pin-threads", "false", "--model-control-mode",
                                    "explicit", "--load-model", "spin",
                                    "--load-model", "fast"]) as server:
        capacity = bench_capacity(server, "spin")
        swaps = []
        pinned = []
        with OpenLoop(server, "spin", LOAD_FRACTION * capacity) as traffic:
            time.sleep(STEADY_S)
            steady_until = time.monotonic()
            version = 1
            for k in range(SWAPS):
                new = 2 if version == 1 else 1
                # A request pinned to the serving version, sent just before the load that retires
                # it: queued on it, it finishes on it. (One: each is load beyond the 70%.)
                results = []

                def send_pinned(v=version, value=float(k)):
                    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
                    conn.request("POST", f"/v2/models/spin/versions/{v}/infer",
                                 infer_body(value), {"Content-Type": "application/json"})
                    response = conn.getresponse()
                    results.append((response.status, json.loads(response.read()), v))
                    conn.close()

                senders = [threading.Thread(target=send_pinned)]
                for sender in senders:
                    sender.start()
                time.sleep(0.002)
                start = time.monotonic()
                # (A config sent with a load may name no files: no default_model_filename.)
                config = {"name": "spin", "backend": "brigade", "max_batch_size": 0,
                          "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [4]}],
                          "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [4]}],
                          "instance_group": [{"count": 1, "kind": "KIND_CPU"}],
                          "version_policy": {"specific": {"versions": [new]}},
                          "parameters": {"compute_us": {"string_value": str(SPIN_US)}},
                          "model_warmup": [{"name": "zeros", "batch_size": 0, "count": 3,
                                            "inputs": {"INPUT0": {"data_type": "TYPE_FP32",
                                                                  "dims": [4],
                                                                  "zero_data": True}}}]}
                status, body = post(server, "/v2/repository/models/spin/load", json.dumps(
                    {"parameters": {"config": json.dumps(config)}}).encode())
                end = time.monotonic()
                assert status == 200, body
                for sender in senders:
                    sender.join()
                pinned.extend(results)
                swaps.append((start, end, version, new))
                version = new
                # Another model's unload and load under the same traffic.
                if k % 2 == 0:
                    assert post(server, "/v2/repository/models/fast/unload")[0] == 200
                    assert post(server, "/v2/repository/models/fast/load")[0] == 200
                time.sleep(0.2)
            time.sleep(0.5)
        pinned_ok = sum(1 for status, answer, v in pinned
                        if status == 200 and answer["model_version"] == str(v))
        p99_steady, p99_swap = check_and_report(
            "explicit", traffic, steady_until, swaps, capacity,
            f"; pinned to the retiring version: {pinned_ok}/{len(pinned)} answered by it")
        # Answered by the version they named, queued before it retired.
        assert pinned_ok == len(pinned), [p for p in pinned if p[0] != 200][:3]
        assert_p99(p99_steady, p99_swap)


def server_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def per_request_cost(server, requests=3000):
    """Sequential requests to `fast` on one keep-alive connection: (server CPU us, client round
    trip p50 us) per request."""
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    body = infer_body(1.0)
    trips = []
    cpu_before = server_cpu_s(server.proc.pid)
    for _ in range(requests):
        start = time.perf_counter()
        conn.request("POST", "/v2/models/fast/infer", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200
        trips.append(time.perf_counter() - start)
    cpu = server_cpu_s(server.proc.pid) - cpu_before
    conn.close()
    return cpu / requests * 1e6, percentile(trips, 50) * 1e6


CYCLES = 1000


def test_a_thousand_unloads_and_loads_leave_the_per_request_cost_and_memory_alone(repo):
    os.makedirs(os.path.join(repo, "fast", "1"))
    write_config(repo, "fast", FAST_CONFIG)
    with BrigadeProcess(model_repository=repo,
                        extra_args=["--pin-threads", "false", "--model-control-mode",
                                    "explicit", "--load-model", "fast"]) as server:
        per_request_cost(server, 1000)  # warm-up
        cpu_first, trip_first = per_request_cost(server)
        rss = {}
        started = time.monotonic()
        for cycle in range(1, CYCLES + 1):
            status, body = post(server, "/v2/repository/models/fast/unload")
            assert status == 200, body
            status, body = post(server, "/v2/repository/models/fast/load")
            assert status == 200, body
            if cycle in (100, CYCLES):
                rss[cycle] = rss_kib(server.proc.pid)
        cycles_s = time.monotonic() - started
        cpu_after, trip_after = per_request_cost(server)
        print(f"{CYCLES} unload+load cycles in {cycles_s:.1f} s; per request: server CPU "
              f"{cpu_first:.0f} -> {cpu_after:.0f} us, round trip p50 {trip_first:.0f} -> "
              f"{trip_after:.0f} us; VmRSS after 100 cycles {rss[100]} KiB, after {CYCLES} "
              f"{rss[CYCLES]} KiB")
        # Within noise: the CPU figure has the 10 ms granularity of the kernel's tick over ~0.5 s,
        # the round trip the machine's other load.
        assert cpu_after <= cpu_first * 1.5 + 10, (cpu_first, cpu_after)
        assert trip_after <= trip_first * 1.5 + 50, (trip_first, trip_after)
        # No growth from cycle 100 (allocator and metric families settled) to 1,000.
        assert rss[CYCLES] - rss[100] < 4 * 1024, rss
