"""End-to-end tests of the response cache: two real `brigade serve` processes sharing a
real `redis-server`, driven by independent clients (http.client, Python grpcio, redis-cli).

The module starts one redis-server on a free loopback port (no persistence) and two Brigade
processes, A and B, on the same temporary model repository, both with
`--cache-redis-address 127.0.0.1:<port>`. Models:

    fm         the Fashion-MNIST demo classifier (TorchScript), cached in both tiers
    ident      the builtin identity model, cached in both tiers (60 s)
    ident_ttl  the same with a 1 s TTL

Whether an answer came from the cache is read from the response parameter `cache_hit: true`.
A hit in B of an input only A has seen can only come from Redis. Every input a test sends is new
to the module (unique values), so tests do not depend on each other's entries. redis-server and
both Brigade processes are always stopped, whatever happens.

Needs /usr/bin/python3 with Debian's python3-grpcio and python3-grpc-tools, redis-server and
redis-cli (redis-tools), and the dataset-fashion-mnist package.
"""

import http.client
import itertools
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import pytest

from brigade_process import DEMO_REPOSITORY, BrigadeProcess, free_port
from fashion_mnist import load_test_set

SRC_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))
PROTOS = ["protocol/grpc_service.proto", "protocol/cache_admin.proto",
          "protocol/model_config.proto"]

IDENTITY = """
name: "{name}"
backend: "brigade"
max_batch_size: 8
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] }} ]
parameters {{ key: "op" value {{ string_value: "identity" }} }}
response_cache {{ enable: true tier: TIER_BOTH ttl_ms: {ttl_ms} }}
"""

FM_CACHE = "\nresponse_cache { enable: true tier: TIER_BOTH ttl_ms: 60000 }\n"
TTL_MS = 1000

_unique = itertools.count(1)


def as_float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def same_float32(received, sent):
    """The server prints FP32 in its shortest round-trip form (1024.0312 for 1024.03125)."""
    return [as_float32(x) for x in received] == [as_float32(x) for x in sent]


def unique_values():
    """16 floats no other request of this module sends."""
    base = float(next(_unique))
    return [base + i / 32.0 for i in range(16)]


# ---- redis-server ------------------------------------------------------------------------------

class RedisServer:
    """A redis-server child on a fixed free port; kill() and start() again simulate an outage."""

    def __init__(self):
        self.port = free_port()
        self.proc = None
        self.dir = tempfile.mkdtemp(prefix="brigade-cache-redis-")

    def start(self, timeout_s=10):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            try:
                if self.cli("PING") == "PONG":
                    return self
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("redis-server did not answer PING")

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def cli(self, *args):
        result = subprocess.run(["redis-cli", "-p", str(self.port)] + list(args),
                                capture_output=True, text=True, timeout=10, check=True)
        return result.stdout.strip()

    def dbsize(self):
        return int(self.cli("DBSIZE"))

    def keys(self):
        out = self.cli("--scan", "--pattern", "brigade:rc*")
        return [k for k in out.splitlines() if k]

    def wait_dbsize_above(self, size, timeout_s=5):
        """Stores reach Redis after the client is answered; waits for one more key."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.dbsize() > size:
                return True
            time.sleep(0.01)
        return False

    def close(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- clients -----------------------------------------------------------------------------------

class Http:
    """One keep-alive HTTP/1.1 connection to a Brigade process (one per thread)."""

    def __init__(self, process):
        self.conn = http.client.HTTPConnection("127.0.0.1", process.http_port, timeout=30)

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        return response.status, response.read()

    def infer(self, model, values, parameters=None, shape=None):
        """(status, outputs[0] data or error text, cache_hit)."""
        body = {"inputs": [{"name": "INPUT0" if model != "fm" else "image", "datatype": "FP32",
                            "shape": shape or ([1, 16] if model != "fm" else [1, 1, 28, 28]),
                            "data": values}]}
        if parameters:
            body["parameters"] = parameters
        status, raw = self.request("POST", f"/v2/models/{model}/infer", body)
        if status != 200:
            return status, raw.decode(errors="replace"), False
        answer = json.loads(raw)
        hit = answer.get("parameters", {}).get("cache_hit", False) is True
        return status, answer["outputs"][0]["data"], hit

    def stats(self, model):
        status, raw = self.request("GET", f"/v2/models/{model}/stats")
        assert status == 200, raw
        entry = json.loads(raw)["model_stats"][0]
        return entry

    def metrics(self):
        status, raw = self.request("GET", "/metrics")
        assert status == 200, raw
        return raw.decode()

    def close(self):
        self.conn.close()


def infer_once(process, model, values, parameters=None):
    client = Http(process)
    try:
        return client.infer(model, values, parameters)
    finally:
        client.close()


def metric_value(text, family, labels):
    """The sample of `family` whose label set contains `labels` (a dict); 0 when absent."""
    for line in text.splitlines():
        if not line.startswith((family + "{", family + " ")):
            continue
        head, value = line.rsplit(" ", 1)
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            return float(value)
    return 0.0


def prime(client, model, values, parameters=None, timeout_s=5):
    """Sends `values` until an answer comes from the cache; returns how many did not (model
    runs). Answers are stored after the client is answered, so an immediate repeat can still miss
    (or join the first request while it is being stored)."""
    misses = 0
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, out, hit = client.infer(model, values, parameters)
        assert status == 200 and same_float32(out, values), out
        if hit:
            return misses
        misses += 1
        parameters = None  # only the first request carries them (e.g. refresh)
        time.sleep(0.002)
    raise AssertionError(f"{model}: no cache hit within {timeout_s} s")


def wait_for_miss(process, model, values, timeout_s=5):
    """Polls until `process` answers `values` without the cache (an invalidation broadcast
    arrives asynchronously); True on the first miss."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, _, hit = infer_once(process, model, values)
        assert status == 200
        if not hit:
            return True
        time.sleep(0.02)
    return False


# ---- fixtures ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stubs():
    from grpc_tools import protoc  # Debian: python3-grpc-tools

    out_dir = tempfile.mkdtemp(prefix="brigade-cache-stubs-")
    command = ["grpc_tools.protoc", "-I" + SRC_DIR, "--python_out=" + out_dir,
               "--grpc_python_out=" + out_dir] + [os.path.join(SRC_DIR, p) for p in PROTOS]
    assert protoc.main(command) == 0, "protoc failed"
    sys.path.insert(0, out_dir)
    from protocol import (cache_admin_pb2, cache_admin_pb2_grpc, grpc_service_pb2,
                            grpc_service_pb2_grpc)
    yield {"pb": grpc_service_pb2, "infer": grpc_service_pb2_grpc, "admin_pb": cache_admin_pb2,
           "admin": cache_admin_pb2_grpc}
    sys.path.remove(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def repository():
    repo = tempfile.mkdtemp(prefix="brigade-cache-repo-")
    fm = os.path.join(repo, "fm")
    os.makedirs(fm)
    source = os.path.join(DEMO_REPOSITORY, "fashion_mnist")
    os.symlink(os.path.join(source, "1"), os.path.join(fm, "1"))
    shutil.copy(os.path.join(source, "labels.txt"), fm)
    with open(os.path.join(source, "config.pbtxt")) as f:
        config = f.read().replace('name: "fashion_mnist"', 'name: "fm"')
    with open(os.path.join(fm, "config.pbtxt"), "w") as f:
        f.write(config + FM_CACHE)
    for name, ttl_ms in (("ident", 60000), ("ident_ttl", TTL_MS)):
        os.makedirs(os.path.join(repo, name, "1"))
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(IDENTITY.format(name=name, ttl_ms=ttl_ms))
    yield repo
    shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def redis():
    server = RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def pair(repository, redis):
    args = ["--cache-redis-address", f"127.0.0.1:{redis.port}"]
    with BrigadeProcess(model_repository=repository, extra_args=args) as a, \
            BrigadeProcess(model_repository=repository, extra_args=args) as b:
        yield a, b


@pytest.fixture(scope="module")
def images():
    return load_test_set(24)


# ---- tests -------------------------------------------------------------------------------------

def test_answer_stored_by_one_process_is_a_hit_in_the_other_through_redis(pair, redis, stubs,
                                                                          images):
    a, b = pair
    pictures, _ = images
    before = redis.dbsize()
    status, logits_a, hit = infer_once(a, "fm", pictures[0])
    assert status == 200 and not hit
    assert redis.wait_dbsize_above(before), "A's answer never reached Redis"
    status, logits_a2, hit = infer_once(a, "fm", pictures[0])
    assert status == 200 and hit and logits_a2 == logits_a
    # B never saw this picture: its hit comes from Redis, and is A's answer exactly.
    status, logits_b, hit = infer_once(b, "fm", pictures[0])
    assert status == 200 and hit
    assert logits_b == logits_a

    # The same through gRPC (raw little-endian tensors), on the other picture's path too.
    before = redis.dbsize()
    assert infer_once(a, "fm", pictures[1])[2] is False
    assert redis.wait_dbsize_above(before)
    pb = stubs["pb"]
    with grpc.insecure_channel(b.grpc_target) as channel:
        stub = stubs["infer"].GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name="fm", id="cached-1")
        tensor = request.inputs.add(name="image", datatype="FP32")
        tensor.shape.extend([1, 1, 28, 28])
        request.raw_input_contents.append(struct.pack("<784f", *pictures[1]))
        response = stub.ModelInfer(request, timeout=30)
    assert response.id == "cached-1"  # the request's own id, not the one that stored the entry
    assert response.parameters["cache_hit"].bool_param is True
    logits = struct.unpack("<10f", response.raw_output_contents[0])
    assert list(logits) == pytest.approx(infer_once(a, "fm", pictures[1])[1], rel=1e-6)

    # Keys carry their TTL in Redis (SET ... PX).
    ttls = [int(redis.cli("PTTL", key)) for key in redis.keys()]
    assert any(ttl > 0 for ttl in ttls), ttls
    assert all(ttl == -2 or 0 < ttl <= 60000 for ttl in ttls), ttls  # -2: expired meanwhile


def test_entries_expire_after_their_ttl_in_both_tiers(pair, redis):
    a, b = pair
    stored_by_a, stored_by_b = unique_values(), unique_values()
    before = redis.dbsize()
    assert infer_once(a, "ident_ttl", stored_by_a)[2] is False
    assert infer_once(b, "ident_ttl", stored_by_b)[2] is False
    assert redis.wait_dbsize_above(before + 1)
    # Within the TTL: hits everywhere (B's copy of A's entry now also sits in B's memory).
    assert infer_once(a, "ident_ttl", stored_by_a)[2] is True
    assert infer_once(b, "ident_ttl", stored_by_a)[2] is True
    assert infer_once(a, "ident_ttl", stored_by_b)[2] is True
    time.sleep(TTL_MS / 1000 + 0.3)
    # Past it: gone from memory and from Redis, in both processes.
    assert infer_once(b, "ident_ttl", stored_by_a)[2] is False
    assert infer_once(a, "ident_ttl", stored_by_b)[2] is False


def test_http_invalidation_reaches_the_other_process(pair, redis):
    a, b = pair
    shared, local = unique_values(), unique_values()
    before = redis.dbsize()
    assert infer_once(a, "ident", shared)[2] is False
    assert infer_once(a, "ident", local)[2] is False
    assert redis.wait_dbsize_above(before + 1)
    assert infer_once(b, "ident", shared)[2] is True  # from Redis, now in B's memory too
    assert infer_once(a, "ident", local)[2] is True

    client = Http(a)
    try:
        status, body = client.request("POST", "/v2/cache/invalidate", {"model_name": "ident"})
        assert status == 200, body
        # A dropped its own entries before answering. (This miss stores `local` again; `shared`
        # must stay out of Redis for the check on B below.)
        assert client.infer("ident", local)[2] is False
    finally:
        client.close()
    # B drops its memory copy when the pub/sub message arrives; Redis no longer has it either.
    assert wait_for_miss(b, "ident", shared), "B kept answering from its cache"


def test_grpc_invalidation_reaches_the_other_process(pair, redis, stubs):
    a, b = pair
    values = unique_values()
    before = redis.dbsize()
    assert infer_once(b, "ident", values)[2] is False
    assert redis.wait_dbsize_above(before)
    assert infer_once(a, "ident", values)[2] is True
    admin_pb = stubs["admin_pb"]
    with grpc.insecure_channel(b.grpc_target) as channel:
        admin = stubs["admin"].CacheAdminStub(channel)
        admin.Invalidate(admin_pb.CacheInvalidateRequest(model_name="ident", model_version="1"),
                         timeout=10)
        with pytest.raises(grpc.RpcError) as error:
            admin.Invalidate(admin_pb.CacheInvalidateRequest(model_version="1"), timeout=10)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as error:
            admin.Invalidate(admin_pb.CacheInvalidateRequest(model_name="ident",
                                                             model_version="x"), timeout=10)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert wait_for_miss(a, "ident", values), "A kept answering from its cache"


def test_invalidate_everything_and_bad_requests_over_http(pair):
    a, b = pair
    values = unique_values()
    client = Http(a)
    try:
        assert prime(client, "ident_ttl", values) >= 1
        assert client.request("POST", "/v2/cache/invalidate", {"model_version": "1"})[0] == 400
        assert client.request("POST", "/v2/cache/invalidate", {"model_name": 5})[0] == 400
        assert client.infer("ident_ttl", values)[2] is True  # refused requests drop nothing
        status, body = client.request("POST", "/v2/cache/invalidate")  # no body: every model
        assert status == 200, body
        assert client.infer("ident_ttl", values)[2] is False
    finally:
        client.close()


def test_bypass_skips_the_cache_and_refresh_recomputes_and_stores(pair):
    a, _ = pair
    client = Http(a)
    try:
        values = unique_values()
        runs = lambda: client.stats("ident")["inference_count"]  # noqa: E731
        start = runs()
        status, out, hit = client.infer("ident", values, {"cache_control": "bypass"})
        assert status == 200 and same_float32(out, values) and not hit
        # A bypassed answer is not stored: the next plain request misses...
        misses = prime(client, "ident", values)
        assert misses >= 1
        # ...and a bypass never reads the cache, though the entry is there.
        assert client.infer("ident", values, {"cache_control": "bypass"})[2] is False
        # A refresh runs the model although the entry is there, and stores again.
        misses += prime(client, "ident", values, {"cache_control": "refresh"})
        # The model ran for the two bypasses and every miss (the refresh is one); never for a
        # hit.
        assert runs() - start == 2 + misses
        status, text, _ = client.infer("ident", values, {"cache_control": "sometimes"})
        assert status == 400 and "cache_control" in text
    finally:
        client.close()


def test_distinct_inputs_never_get_each_others_answer(pair, images):
    a, b = pair
    pictures, _ = images
    pictures = pictures[4:]
    # Reference answers computed by the model (no cache involved).
    reference = [infer_once(a, "fm", p, {"cache_control": "bypass"})[1] for p in pictures]
    assert len({json.dumps(r) for r in reference}) == len(pictures)
    order = list(range(len(pictures))) * 3
    random.Random(6).shuffle(order)
    hits = 0
    clients = [Http(a), Http(b)]
    try:
        for n, i in enumerate(order):
            status, logits, hit = clients[n % 2].infer("fm", pictures[i])
            assert status == 200
            hits += hit
            assert logits == pytest.approx(reference[i], rel=1e-5, abs=1e-5), f"picture {i}"
        # Inputs one ULP apart are different requests.
        values = unique_values()
        nudged = list(values)
        nudged[7] = struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack(
            "<f", nudged[7]))[0] + 1))[0]
        assert same_float32(clients[0].infer("ident", values)[1], values)
        status, out, hit = clients[0].infer("ident", nudged)
        assert status == 200 and not hit
        assert same_float32(out, nudged)
    finally:
        for client in clients:
            client.close()
    assert hits >= len(pictures)  # each picture's later requests were answered from a cache


def test_statistics_and_metrics_count_hits_and_misses(pair):
    a, _ = pair
    client = Http(a)
    try:
        def counts():
            stats = client.stats("ident")["inference_stats"]
            text = client.metrics()
            labels = {"model": "ident", "version": "1"}
            # The cache's own families count per model, hits by tier.
            hits = sum(metric_value(text, "brigade_response_cache_hits_total",
                                    {"model": "ident", "tier": tier})
                       for tier in ("memory", "redis"))
            return (stats["cache_hit"]["count"], stats["cache_miss"]["count"], hits,
                    metric_value(text, "brigade_response_cache_misses_total", {"model": "ident"}),
                    metric_value(text, "nv_cache_num_hits_per_model", labels),
                    metric_value(text, "nv_cache_num_misses_per_model", labels))

        before = counts()
        values = unique_values()
        misses = prime(client, "ident", values)
        assert client.infer("ident", values)[2] is True
        assert client.infer("ident", values, {"cache_control": "bypass"})[2] is False
        after = counts()
        delta = [x - y for x, y in zip(after, before)]
        # Two hits; every miss counted once; the bypass in neither.
        assert delta == [2, misses, 2, misses, 2, misses], (before, after)
        text = client.metrics()
        for family in ("nv_cache_num_hits_per_model", "nv_cache_num_misses_per_model",
                       "brigade_response_cache_lookups_total",
                       "brigade_response_cache_hits_total",
                       "brigade_response_cache_misses_total"):
            assert f"# TYPE {family} counter" in text, family
        # One family per concept: no second, request-level copy of the hit and miss counts.
        assert "brigade_cache_hits_total" not in text
        assert "brigade_cache_misses_total" not in text
        # The cache's own families: by tier, with the byte use and the Redis tier's health.
        model = {"model": "ident"}
        assert metric_value(text, "brigade_response_cache_hits_total",
                            {"model": "ident", "tier": "memory"}) >= 2
        assert metric_value(text, "brigade_response_cache_memory_bytes", model) > 0
        assert 0 < metric_value(text, "brigade_response_cache_hit_ratio", model) < 1
        assert metric_value(text, "brigade_response_cache_control_total",
                            {"model": "ident", "control": "bypass"}) >= 1
        assert metric_value(text, "brigade_response_cache_lookup_duration_seconds_count",
                            {"model": "ident", "outcome": "memory_hit"}) >= 2
        assert metric_value(text, "brigade_response_cache_redis_up", {}) == 1
        if shutil.which("promtool"):
            check = subprocess.run(["promtool", "check", "metrics"], input=text,
                                   capture_output=True, text=True, timeout=60)
            # 0 = clean, 3 = lint findings only; those may only be Triton's nv_* names.
            assert check.returncode in (0, 3), check.stdout + check.stderr
            findings = [line for line in (check.stdout + check.stderr).splitlines()
                        if line.strip()]
            assert all(line.startswith("nv_") for line in findings), findings
    finally:
        client.close()


def test_redis_killed_under_load_fails_no_request_and_recovers(pair, redis):
    a, b = pair
    pool = [unique_values() for _ in range(64)]
    stop = threading.Event()
    outcomes = {"ok": 0, "hits": 0, "wrong": 0, "failed": []}
    lock = threading.Lock()

    def load(process, seed):
        rng = random.Random(seed)
        client = Http(process)
        try:
            while not stop.is_set():
                # Mostly repeated inputs (memory hits), a quarter new ones: those go to Redis,
                # and while it is down their lookups and stores fail.
                values = pool[rng.randrange(len(pool))] if rng.random() < 0.75 else \
                    unique_values()
                try:
                    status, out, hit = client.infer("ident", values)
                except (OSError, http.client.HTTPException) as error:
                    status, out, hit = -1, repr(error), False
                    client.close()
                    client = Http(process)
                with lock:
                    if status != 200:
                        outcomes["failed"].append((status, out))
                    elif not same_float32(out, values):
                        outcomes["wrong"] += 1
                        outcomes.setdefault("example", (values, out))
                    else:
                        outcomes["ok"] += 1
                        outcomes["hits"] += hit
        finally:
            client.close()

    threads = [threading.Thread(target=load, args=(p, i))
               for i, p in enumerate([a, b, a, b])]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1.0)
        redis.kill()
        with lock:
            at_kill = outcomes["ok"]
        time.sleep(1.5)
        with lock:
            during_outage = outcomes["ok"] - at_kill
        redis.start()
        time.sleep(1.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    print(f"redis outage: {outcomes['ok']} answers ({outcomes['hits']} hits), "
          f"{during_outage} while Redis was down")
    assert outcomes["failed"] == [], outcomes["failed"][:5]
    assert outcomes["wrong"] == 0, outcomes.get("example")
    assert during_outage > 50, "requests stalled while Redis was down"
    assert outcomes["hits"] > 0
    # The outage is visible in the Redis tier's metrics.
    for process in (a, b):
        client = Http(process)
        try:
            text = client.metrics()
        finally:
            client.close()
        failed = sum(metric_value(text, "brigade_response_cache_redis_commands_total",
                                  {"result": result})
                     for result in ("timeout", "unavailable", "rejected_open"))
        assert failed > 0, text
        assert metric_value(text, "brigade_response_cache_redis_disconnects_total", {}) >= 1
        assert metric_value(text, "brigade_response_cache_redis_errors_total",
                            {"model": "ident"}) > 0

    # Recovery: once reconnected (and the breaker closed), an answer A stores is a hit in B
    # again. Redis restarted empty, so any key in it was written after the restart.
    deadline = time.monotonic() + 15
    recovered = False
    while not recovered and time.monotonic() < deadline:
        values = unique_values()
        before = redis.dbsize()
        assert infer_once(a, "ident", values)[0] == 200
        if redis.wait_dbsize_above(before, timeout_s=0.5):
            recovered = infer_once(b, "ident", values)[2]
    assert recovered, "the Redis tier did not come back after redis-server restarted"
    # Invalidation broadcasts flow again too. A lookup slower than the Redis tier's 2 ms timeout
    # is a miss by design, and on two loaded cores one can be: a few fresh keys, as above.
    shared = False
    for _ in range(5):
        values = unique_values()
        before = redis.dbsize()
        assert infer_once(a, "ident", values)[2] is False
        assert redis.wait_dbsize_above(before)
        if infer_once(b, "ident", values)[2]:
            shared = True
            break
    assert shared, "no answer A stored was a hit in B after the recovery"
    client = Http(a)
    try:
        assert client.request("POST", "/v2/cache/invalidate", {"model_name": "ident"})[0] == 200
    finally:
        client.close()
    assert wait_for_miss(b, "ident", values)
    # Both processes kept serving throughout and stop cleanly.
    assert a.proc.poll() is None and b.proc.poll() is None
