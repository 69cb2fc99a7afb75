"""End-to-end tests of Triton's system shared memory extension over HTTP (urllib) and gRPC
(Python grpcio, stubs generated from Brigade's .proto): regions are POSIX shm objects the test
creates in /dev/shm with os/mmap, as tritonclient.utils.shared_memory does with shm_open.

The model is the demo repository's `identity` (OUTPUT0 = INPUT0, FP32 [16], batch up to 8);
`brigade bench --shared-memory system` runs against a wide copy of it (FP32 [16384]).
"""

import json
import mmap
import os
import shutil
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
from brigade_process import BRIGADE_BIN, BrigadeProcess
from test_auth_e2e import ADMIN_TOKEN, INFER_TOKEN, write_tokens

ROW_BYTES = 16 * 4


class Region:
    """A POSIX shm object of `size` bytes, mapped here; unlinked by close()."""

    def __init__(self, tag, size=4096):
        self.key = f"/brigade_e2e_{os.getpid()}_{tag}"
        self.path = "/dev/shm" + self.key
        fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        os.ftruncate(fd, size)
        self.map = mmap.mmap(fd, size)
        os.close(fd)

    def write_floats(self, offset, values):
        self.map[offset:offset + 4 * len(values)] = struct.pack(f"<{len(values)}f", *values)

    def read_floats(self, offset, count):
        return list(struct.unpack(f"<{count}f", self.map[offset:offset + 4 * count]))

    def close(self):
        self.map.close()
        os.unlink(self.path)


def http(server, path, payload=None, headers=None):
    """(status, parsed JSON body or None, raw body)."""
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(server.http_url + path, data=data,
                                     method="GET" if payload is None else "POST")
    request.add_header("Content-Type", "application/json")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    try:
        return status, json.loads(body) if body else None, body
    except ValueError:
        return status, None, body


def register(server, name, key, byte_size, offset=0, headers=None):
    return http(server, f"/v2/systemsharedmemory/region/{name}/register",
                {"key": key, "offset": offset, "byte_size": byte_size}, headers)


def shm_params(region, offset, byte_size):
    return {"shared_memory_region": region, "shared_memory_offset": offset,
            "shared_memory_byte_size": byte_size}


def infer_shm(server, region, in_offset=0, out_offset=ROW_BYTES, byte_size=ROW_BYTES,
              out_region=None):
    payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                           "parameters": shm_params(region, in_offset, byte_size)}],
               "outputs": [{"name": "OUTPUT0",
                            "parameters": shm_params(out_region or region, out_offset,
                                                     ROW_BYTES)}]}
    return http(server, "/v2/models/identity/infer", payload)


@pytest.fixture(scope="module")
def server():
    with BrigadeProcess() as process:
        yield process


@pytest.fixture(scope="module")
def stubs():
    out_dir = tempfile.mkdtemp(prefix="brigade-grpc-stubs-")
    grpc_client_test.generate_stubs(out_dir)
    yield grpc_client_test.PB, grpc_client_test.STUB_MODULE
    shutil.rmtree(out_dir, ignore_errors=True)


@pytest.fixture
def region():
    shm = Region(f"r{threading.get_ident()}_{os.urandom(4).hex()}")
    yield shm
    shm.close()


def test_http_inputs_are_read_from_and_outputs_written_into_the_region(server, region):
    assert register(server, "io", region.key, 4096)[0] == 200
    try:
        values = [float(i) * 0.5 for i in range(16)]
        region.write_floats(0, values)
        status, body, raw = infer_shm(server, "io")
        assert status == 200, raw
        output = body["outputs"][0]
        assert output["name"] == "OUTPUT0" and output["shape"] == [1, 16]
        assert "data" not in output  # the bytes are in the region
        assert region.read_floats(ROW_BYTES, 16) == values

        status, listed, _ = http(server, "/v2/systemsharedmemory/status")
        assert status == 200
        assert {"name": "io", "key": region.key, "offset": 0, "byte_size": 4096} in listed
        status, one, _ = http(server, "/v2/systemsharedmemory/region/io/status")
        assert status == 200 and one == [{"name": "io", "key": region.key, "offset": 0,
                                          "byte_size": 4096}]
        # A region may also be a window into its object: offset 2048, so its 0 is byte 2048.
        assert register(server, "window", region.key, 1024, offset=2048)[0] == 200
        region.write_floats(2048, [7.0] * 16)
        status, _, raw = infer_shm(server, "window", in_offset=0, out_offset=512)
        assert status == 200, raw
        assert region.read_floats(2048 + 512, 16) == [7.0] * 16
        # A plain JSON input with a shared-memory output, and the reverse.
        payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                               "data": [1.0] * 16}],
                   "outputs": [{"name": "OUTPUT0", "parameters": shm_params("io", 1024, 64)}]}
        assert http(server, "/v2/models/identity/infer", payload)[0] == 200
        assert region.read_floats(1024, 16) == [1.0] * 16
    finally:
        http(server, "/v2/systemsharedmemory/region/window/unregister", {})
        assert http(server, "/v2/systemsharedmemory/region/io/unregister", {})[0] == 200
    assert http(server, "/v2/systemsharedmemory/region/io/status")[0] == 404


@pytest.mark.parametrize("key, fragment", [
    ("/../etc/passwd", "never a path"),
    ("/dev/shm/x", "never a path"),
    ("/a b", "never a path"),
    ("/..", "must not contain '..'"),
    ("", "shared memory key is empty"),
    ("/" + "k" * 256, "at most 255"),
    ("/brigade_e2e_no_such_key", "cannot open key"),
])
def test_bad_keys_are_refused_naming_the_key(server, key, fragment):
    status, body, raw = register(server, "bad", key, 64)
    assert status == 400, raw
    assert fragment in body["error"]
    assert http(server, "/v2/systemsharedmemory/region/bad/status")[0] == 404


def test_bad_registrations_and_double_register(server, region):
    status, body, _ = register(server, "big", region.key, 8192)
    assert status == 400 and "runs past the end of key" in body["error"]
    status, body, _ = register(server, "off", region.key, 16, offset=4090)
    assert status == 400 and "runs past the end" in body["error"]
    status, body, _ = http(server, "/v2/systemsharedmemory/region/nokey/register",
                           {"byte_size": 64})
    assert status == 400 and "has no 'key'" in body["error"]
    status, body, _ = http(server, "/v2/systemsharedmemory/region/r/register",
                           {"key": region.key, "byte_size": "64"})
    assert status == 400 and "'byte_size' must be a non-negative integer" in body["error"]
    assert register(server, "twice", region.key, 64)[0] == 200
    status, body, _ = register(server, "twice", region.key, 64)
    assert status == 400 and "'twice' is already registered" in body["error"]
    assert http(server, "/v2/systemsharedmemory/region/twice/unregister", {})[0] == 200
    # Unregistering what is not registered is fine, as in Triton.
    assert http(server, "/v2/systemsharedmemory/region/twice/unregister", {})[0] == 200


def test_offsets_past_the_end_and_sizes_that_do_not_fit_are_400_naming_the_field(server, region):
    assert register(server, "small", region.key, 256)[0] == 200
    try:
        status, body, _ = infer_shm(server, "small", in_offset=224)
        assert status == 400
        assert "input 'INPUT0'" in body["error"] and "shared_memory_offset" in body["error"]
        status, body, _ = infer_shm(server, "small", in_offset=2 ** 64 - 8)
        assert status == 400 and "run past the end of region 'small'" in body["error"]
        status, body, _ = infer_shm(server, "small", out_offset=250)
        assert status == 400 and "output 'OUTPUT0'" in body["error"]
        status, body, _ = infer_shm(server, "small", byte_size=60)
        assert status == 400 and "shared_memory_byte_size 60" in body["error"]
        status, body, _ = infer_shm(server, "nope")
        assert status == 400 and "no region 'nope' is registered" in body["error"]
        payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                               "parameters": {"shared_memory_region": "small"}}]}
        status, body, _ = http(server, "/v2/models/identity/infer", payload)
        assert status == 400 and "needs a 'shared_memory_byte_size'" in body["error"]
        # An output region too small for the answer.
        payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 16],
                               "data": [1.0] * 16}],
                   "outputs": [{"name": "OUTPUT0", "parameters": shm_params("small", 0, 32)}]}
        status, body, _ = http(server, "/v2/models/identity/infer", payload)
        assert status == 400 and "its shared_memory_byte_size is 32" in body["error"]
    finally:
        http(server, "/v2/systemsharedmemory/region/small/unregister", {})


def test_unregister_under_load_answers_every_request_and_keeps_the_server_up(server, region):
    assert register(server, "busy", region.key, 4096)[0] == 200
    region.write_floats(0, [3.0] * 16)
    results, lock = [], threading.Lock()
    stop = threading.Event()

    def load(worker):
        while not stop.is_set():
            status, body, _ = infer_shm(server, "busy", out_offset=ROW_BYTES * (1 + worker))
            with lock:
                results.append((status, body))

    threads = [threading.Thread(target=load, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    while len(results) < 100:
        time.sleep(0.01)
    assert http(server, "/v2/systemsharedmemory/region/busy/unregister", {})[0] == 200
    count = len(results)
    while len(results) < count + 50:
        time.sleep(0.01)
    stop.set()
    for thread in threads:
        thread.join()
    ok = [r for r in results if r[0] == 200]
    refused = [r for r in results if r[0] != 200]
    assert len(ok) >= 100
    assert refused, "requests after the unregister must be refused"
    for status, body in refused:
        assert status == 400 and "no region 'busy' is registered" in body["error"], body
    assert region.read_floats(ROW_BYTES, 16) == [3.0] * 16
    assert http(server, "/v2/health/live")[0] == 200


def test_cuda_shared_memory_is_not_supported_saying_so(server):
    status, body, _ = http(server, "/v2/cudasharedmemory/region/c/register",
                           {"raw_handle": {"b64": ""}, "device_id": 0, "byte_size": 8})
    assert status == 501 and "CUDA shared memory is not supported" in body["error"]
    assert http(server, "/v2/cudasharedmemory/status")[0] == 501


def grpc_stub(stubs, server):
    pb, stub_module = stubs
    channel = grpc.insecure_channel(server.grpc_target)
    return pb, stub_module.GRPCInferenceServiceStub(channel), channel


def grpc_error(call):
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code(), error.value.details()


def shm_infer_request(pb, region, in_offset=0, out_offset=ROW_BYTES, byte_size=ROW_BYTES):
    request = pb.ModelInferRequest(model_name="identity")
    tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16])
    tensor.parameters["shared_memory_region"].string_param = region
    tensor.parameters["shared_memory_offset"].int64_param = in_offset
    tensor.parameters["shared_memory_byte_size"].int64_param = byte_size
    output = request.outputs.add(name="OUTPUT0")
    output.parameters["shared_memory_region"].string_param = region
    output.parameters["shared_memory_offset"].int64_param = out_offset
    output.parameters["shared_memory_byte_size"].int64_param = ROW_BYTES
    return request


def test_grpc_register_infer_status_and_unregister(stubs, server, region):
    pb, stub, channel = grpc_stub(stubs, server)
    with channel:
        stub.SystemSharedMemoryRegister(
            pb.SystemSharedMemoryRegisterRequest(name="g", key=region.key, offset=0,
                                                 byte_size=4096), timeout=10)
        status = stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(name="g"),
                                               timeout=10)
        assert status.regions["g"].key == region.key and status.regions["g"].byte_size == 4096
        values = [float(-i) for i in range(16)]
        region.write_floats(0, values)
        response = stub.ModelInfer(shm_infer_request(pb, "g"), timeout=30)
        assert list(response.outputs[0].shape) == [1, 16]
        assert len(response.raw_output_contents) == 1 and response.raw_output_contents[0] == b""
        assert region.read_floats(ROW_BYTES, 16) == values

        code, details = grpc_error(lambda: stub.SystemSharedMemoryRegister(
            pb.SystemSharedMemoryRegisterRequest(name="g", key=region.key, byte_size=64),
            timeout=10))
        assert code == grpc.StatusCode.ALREADY_EXISTS and "'g' is already registered" in details
        code, details = grpc_error(lambda: stub.ModelInfer(
            shm_infer_request(pb, "g", in_offset=4090), timeout=30))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert "input 'INPUT0'" in details and "run past the end of region 'g'" in details
        code, details = grpc_error(lambda: stub.ModelInfer(
            shm_infer_request(pb, "g", byte_size=32), timeout=30))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "shared_memory_byte_size 32" in details

        stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="g"),
                                          timeout=10)
        code, details = grpc_error(lambda: stub.ModelInfer(shm_infer_request(pb, "g"),
                                                           timeout=30))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "no region 'g'" in details
        code, _ = grpc_error(lambda: stub.SystemSharedMemoryStatus(
            pb.SystemSharedMemoryStatusRequest(name="g"), timeout=10))
        assert code == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("key", ["/../etc/passwd", "/a/b", "", "/brigade_e2e_missing"])
def test_grpc_bad_keys_are_invalid_argument(stubs, server, key):
    pb, stub, channel = grpc_stub(stubs, server)
    with channel:
        code, details = grpc_error(lambda: stub.SystemSharedMemoryRegister(
            pb.SystemSharedMemoryRegisterRequest(name="k", key=key, byte_size=64), timeout=10))
    assert code == grpc.StatusCode.INVALID_ARGUMENT, details
    assert "key" in details


def test_grpc_cuda_shared_memory_is_unimplemented_saying_why(stubs, server):
    pb, stub, channel = grpc_stub(stubs, server)
    with channel:
        code, details = grpc_error(lambda: stub.CudaSharedMemoryRegister(
            pb.CudaSharedMemoryRegisterRequest(name="c", byte_size=8), timeout=10))
        assert code == grpc.StatusCode.UNIMPLEMENTED
        assert "CUDA shared memory is not supported" in details
        code, _ = grpc_error(lambda: stub.CudaSharedMemoryStatus(
            pb.CudaSharedMemoryStatusRequest(), timeout=10))
        assert code == grpc.StatusCode.UNIMPLEMENTED


def test_the_feature_can_be_turned_off(region):
    with BrigadeProcess(extra_args=["--shared-memory", "none"]) as off:
        status, body, _ = register(off, "r", region.key, 64)
        assert status == 501 and "system shared memory is disabled" in body["error"]
        status, metadata, _ = http(off, "/v2")
        assert "system_shared_memory" not in metadata["extensions"]
        status, body, _ = infer_shm(off, "r")
        assert status == 400 and "system shared memory is disabled" in body["error"]


def test_registering_needs_the_admin_scope_when_tokens_are_configured(region):
    workdir = tempfile.mkdtemp(prefix="brigade-shm-auth-")
    try:
        tokens = os.path.join(workdir, "tokens")
        write_tokens(tokens, f"infer {INFER_TOKEN} app\nadmin {ADMIN_TOKEN} ops\n")
        with BrigadeProcess(extra_args=["--auth-token-file", tokens]) as guarded:
            infer = {"Authorization": f"Bearer {INFER_TOKEN}"}
            admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
            assert register(guarded, "r", region.key, 4096, headers=infer)[0] == 403
            assert register(guarded, "r", region.key, 4096)[0] == 401
            assert register(guarded, "r", region.key, 4096, headers=admin)[0] == 200
            assert http(guarded, "/v2/systemsharedmemory/status", headers=infer)[0] == 200
            assert http(guarded, "/v2/systemsharedmemory/region/r/unregister", {},
                        headers=infer)[0] == 403
            assert http(guarded, "/v2/systemsharedmemory/region/r/unregister", {},
                        headers=admin)[0] == 200
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# `brigade bench --shared-memory system`: a copy of `identity` whose one row (64 KiB) is four
# times the server's body limit, so a request can only succeed if its tensor went through the
# region; the same bench without shared memory must fail every request, or the check proves
# nothing.
WIDE_ELEMENTS = 16384
WIDE_CONFIG = """name: "wide"
backend: "brigade"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ %d ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ %d ] } ]
parameters { key: "op" value { string_value: "identity" } }
""" % (WIDE_ELEMENTS, WIDE_ELEMENTS)


@pytest.fixture(scope="module")
def wide_repository():
    repo = tempfile.mkdtemp(prefix="brigade-shm-bench-")
    try:
        os.makedirs(os.path.join(repo, "wide", "1"))
        with open(os.path.join(repo, "wide", "config.pbtxt"), "w") as f:
            f.write(WIDE_CONFIG)
        yield repo
    finally:
        shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def wide_server(wide_repository):
    with BrigadeProcess(model_repository=wide_repository,
                        extra_args=["--http-max-input-size", "16384"]) as process:
        yield process


def bench_shm_objects():
    return {name for name in os.listdir("/dev/shm") if name.startswith("brigade-bench-")}


def run_bench(server, protocol, *flags):
    address = (f"127.0.0.1:{server.http_port}" if protocol == "http"
               else f"127.0.0.1:{server.grpc_port}")
    return subprocess.run(
        [BRIGADE_BIN, "bench", "-m", "wide", "-i", protocol, "-u", address, "-f", "json",
         "--no-progress", "--warmup-requests", "20", "--requests", "300", "--concurrency", "1,3",
         *flags], capture_output=True, text=True, timeout=120)


def successes(server):
    _, stats, _ = http(server, "/v2/models/wide/stats")
    return stats["model_stats"][0]["inference_stats"]["success"]["count"]


@pytest.mark.parametrize("protocol,flags", [("http", []), ("http", ["--http-binary"]),
                                            ("grpc", [])])
def test_bench_sends_inputs_through_shared_memory(wide_server, protocol, flags):
    before_objects = bench_shm_objects()
    inline = run_bench(wide_server, protocol, *flags)
    assert inline.returncode == 0, inline.stderr
    for level in json.loads(inline.stdout)["levels"]:
        assert level["ok"] == 0 and level["failed"] == 300, level  # 413 / RESOURCE_EXHAUSTED

    before = successes(wide_server)
    out = run_bench(wide_server, protocol, "--shared-memory", "system", *flags)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["protocol"].endswith("+shm")
    for level in report["levels"]:
        assert level["ok"] == 300 and level["failed"] == 0, level
    # Warm-up and measured requests, 2 levels: the server answered every one from the regions.
    assert successes(wide_server) - before == 2 * (20 + 300)
    # Every region was unregistered, and its shm object removed.
    status, regions, _ = http(wide_server, "/v2/systemsharedmemory/status")
    assert status == 200 and regions == []
    assert bench_shm_objects() == before_objects


def test_bench_with_shared_memory_against_a_server_without_it_fails_saying_why(wide_repository):
    with BrigadeProcess(model_repository=wide_repository,
                        extra_args=["--shared-memory", "none"]) as off:
        before_objects = bench_shm_objects()
        out = subprocess.run(
            [BRIGADE_BIN, "bench", "-m", "wide", "-u", f"127.0.0.1:{off.http_port}",
             "--no-progress", "--requests", "10", "--shared-memory", "system"],
            capture_output=True, text=True, timeout=60)
        assert out.returncode == 1
        assert "registering shared memory region 'brigade-bench-" in out.stderr
        assert "system shared memory is disabled" in out.stderr
        assert bench_shm_objects() == before_objects
