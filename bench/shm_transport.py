#!/usr/bin/python3
"""Shared memory vs HTTP binary vs gRPC for a ResNet-50-sized input (FP32 [1, 3, 224, 224],
602,112 bytes), on one Brigade server, at 1 and 16 concurrent clients.

    /usr/bin/python3 bench/shm_transport.py [--brigade build/brigade] [--requests 2000]

Each transport gets its own copy of one tiny ONNX model (GlobalAveragePool + Flatten: it reads
every input byte and answers 3 floats), so the server's per-model statistics separate the
transports while they share the server. Clients are separate processes (no GIL between them):
  http-binary  raw keep-alive socket, Triton's binary extension (JSON header + 602 KB)
  grpc         grpcio ModelInfer, the tensor in raw_input_contents
  shm-http     the tensor copied into the client's registered region, then a ~300 B JSON request
  shm-grpc     the same over gRPC
The shared-memory clients count the copy into their region (numpy) in their latency and CPU: that
is what a client does to send a new tensor that way. The "-inplace" variants skip it (a client
that produces its tensor in the region, e.g. decodes an image straight into it). Outputs come back
in the answer for all.

Printed per transport and concurrency: client-observed latency p50/p99, the server's compute p50
(the model's own time, from the statistics extension's stage summary), overhead p50 = client p50
minus server compute p50 (everything that is not the model: both sides' stacks and the
transfer), and client CPU per request (user + system time of the client processes / requests).
Prints, asserts nothing.
"""

import argparse
import json
import mmap
import multiprocessing
import os
import platform
import resource
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
import grpc  # noqa: E402

import grpc_client_test  # noqa: E402
from brigade_process import BrigadeProcess  # noqa: E402

SHAPE = (1, 3, 224, 224)
BYTES = int(np.prod(SHAPE)) * 4
TRANSPORTS = ["http-binary", "grpc", "shm-http", "shm-grpc", "shm-http-inplace",
              "shm-grpc-inplace"]


def write_model(path):
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["input"], ["pooled"]),
         helper.make_node("Flatten", ["pooled"], ["output"])],
        "pool",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 224, 224])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


CONFIG = """name: "{name}"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ {{ name: "input" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] }} ]
output [ {{ name: "output" data_type: TYPE_FP32 dims: [ 3 ] }} ]
"""


def model_name(transport, concurrency):
    return f"pool_{transport.replace('-', '_')}_c{concurrency}"


def make_repository(root, concurrencies):
    model_file = os.path.join(root, "pool.onnx")
    write_model(model_file)
    for transport in TRANSPORTS:
        for c in concurrencies:
            name = model_name(transport, c)
            os.makedirs(os.path.join(root, name, "1"))
            shutil.copy(model_file, os.path.join(root, name, "1", "model.onnx"))
            with open(os.path.join(root, name, "config.pbtxt"), "w") as f:
                f.write(CONFIG.format(name=name))
    os.unlink(model_file)


class Region:
    def __init__(self, key):
        self.key = key
        self.path = "/dev/shm" + key
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        os.ftruncate(fd, BYTES + 4096)
        self.map = mmap.mmap(fd, BYTES + 4096)
        os.close(fd)
        self.view = np.frombuffer(self.map, dtype=np.float32, count=BYTES // 4)

    def close(self):
        del self.view
        self.map.close()
        os.unlink(self.path)


def http_register(base, name, key):
    body = json.dumps({"key": key, "offset": 0, "byte_size": BYTES + 4096}).encode()
    request = urllib.request.Request(f"{base}/v2/systemsharedmemory/region/{name}/register",
                                     data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def read_http_response(sock, pending):
    """Reads one HTTP/1.1 response (Content-Length framed); returns (status, leftover bytes)."""
    buffer = pending
    while b"\r\n\r\n" not in buffer:
        buffer += sock.recv(65536)
    head, rest = buffer.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += sock.recv(65536)
    return status, rest[length:]


def client(transport, model, port, grpc_port, requests, seed, out_queue):
    try:
        run_client(transport, model, port, grpc_port, requests, seed, out_queue)
    except BaseException as error:  # the parent waits on the queue: always answer it
        out_queue.put(error)
        raise


def run_client(transport, model, port, grpc_port, requests, seed, out_queue):
    rng = np.random.default_rng(seed)
    tensor = rng.standard_normal(SHAPE, dtype=np.float32)
    latencies = []
    region = None
    if transport.startswith("shm"):
        region = Region(f"/brigade_bench_{os.getpid()}")
        http_register(f"http://127.0.0.1:{port}", f"r{os.getpid()}", region.key)
    region_name = f"r{os.getpid()}"
    shm_params = {"shared_memory_region": region_name, "shared_memory_offset": 0,
                  "shared_memory_byte_size": BYTES}
    copy = region is not None and not transport.endswith("-inplace")
    if region is not None:
        np.copyto(region.view, tensor.reshape(-1))
    if transport in ("http-binary", "shm-http", "shm-http-inplace"):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if transport == "http-binary":
            header = json.dumps({"inputs": [{"name": "input", "datatype": "FP32",
                                             "shape": list(SHAPE),
                                             "parameters": {"binary_data_size": BYTES}}]}).encode()
            body = header + tensor.tobytes()
            extra = f"Inference-Header-Content-Length: {len(header)}\r\n"
        else:
            body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32",
                                           "shape": list(SHAPE),
                                           "parameters": shm_params}]}).encode()
            extra = "Content-Type: application/json\r\n"
        head = (f"POST /v2/models/{model}/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        message = head + body
        pending = b""
        start_cpu = resource.getrusage(resource.RUSAGE_SELF)
        for i in range(requests):
            t0 = time.perf_counter_ns()
            if copy:
                np.copyto(region.view, tensor.reshape(-1))
            sock.sendall(message)
            status, pending = read_http_response(sock, pending)
            latencies.append(time.perf_counter_ns() - t0)
            assert status == 200, status
        sock.close()
    else:
        pb, stub_module = grpc_client_test.PB, grpc_client_test.STUB_MODULE
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}",
                                        options=[("grpc.max_send_message_length", 1 << 26)])
        stub = stub_module.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name=model)
        tensor_message = request.inputs.add(name="input", datatype="FP32", shape=list(SHAPE))
        if region is None:
            request.raw_input_contents.append(tensor.tobytes())
        else:
            for key, value in shm_params.items():
                if isinstance(value, str):
                    tensor_message.parameters[key].string_param = value
                else:
                    tensor_message.parameters[key].int64_param = value
        stub.ModelInfer(request, timeout=30)  # connect
        start_cpu = resource.getrusage(resource.RUSAGE_SELF)
        for i in range(requests):
            t0 = time.perf_counter_ns()
            if copy:
                np.copyto(region.view, tensor.reshape(-1))
            stub.ModelInfer(request, timeout=30)
            latencies.append(time.perf_counter_ns() - t0)
        channel.close()
    end_cpu = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = (end_cpu.ru_utime - start_cpu.ru_utime) + (end_cpu.ru_stime - start_cpu.ru_stime)
    if region is not None:
        region.close()
    out_queue.put((latencies, cpu_s))


def server_stages(base, model):
    with urllib.request.urlopen(f"{base}/v2/models/{model}/stats", timeout=10) as response:
        stats = json.loads(response.read())["model_stats"][0]
    return {s["stage"]: s["p50_us"] for s in stats.get("brigade_stage_latency", [])}


def run(transport, concurrency, requests, server, out_dir):
    model = model_name(transport, concurrency)
    queue = multiprocessing.Queue()
    per_client = max(1, requests // concurrency)
    # Warm-up: a few requests through the same path (first-touch allocations, connections).
    warm = multiprocessing.Process(target=client, args=(transport, model, server.http_port,
                                                        server.grpc_port, 20, 0, queue))
    warm.start()
    got = queue.get()
    warm.join()
    if isinstance(got, BaseException):
        raise RuntimeError(f"{transport}: warm-up client failed: {got!r}")
    processes = [multiprocessing.Process(target=client,
                                         args=(transport, model, server.http_port,
                                               server.grpc_port, per_client, i + 1, queue))
                 for i in range(concurrency)]
    wall0 = time.perf_counter()
    for p in processes:
        p.start()
    results = [queue.get() for _ in processes]
    wall = time.perf_counter() - wall0
    for got in results:
        if isinstance(got, BaseException):
            raise RuntimeError(f"{transport}: a client failed: {got!r}")
    for p in processes:
        p.join()
    latencies = np.array([x for r in results for x in r[0]], dtype=np.float64) / 1e3
    cpu_s = sum(r[1] for r in results)
    stages = server_stages(server.http_url, model)
    total = len(latencies)
    row = {
        "transport": transport, "concurrency": concurrency, "requests": total,
        "throughput_rps": total / wall,
        "p50_us": float(np.percentile(latencies, 50)), "p99_us": float(np.percentile(latencies, 99)),
        "server_total_p50_us": stages.get("total"), "server_compute_p50_us": stages.get("compute"),
        "server_receive_p50_us": stages.get("receive"),
        "server_stage_p50_us": stages,
        "client_cpu_us_per_request": cpu_s / total * 1e6,
    }
    row["overhead_p50_us"] = row["p50_us"] - (row["server_compute_p50_us"] or 0.0)
    row["server_overhead_p50_us"] = ((row["server_total_p50_us"] or 0.0) -
                                     (row["server_compute_p50_us"] or 0.0))
    return row


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "shm_transport.json"))
    args = parser.parse_args()
    multiprocessing.set_start_method("fork")
    work = tempfile.mkdtemp(prefix="brigade-shm-bench-")
    try:
        grpc_client_test.generate_stubs(work)
        repo = os.path.join(work, "repo")
        os.makedirs(repo)
        make_repository(repo, args.concurrency)
        rows = []
        with BrigadeProcess(model_repository=repo,
                            extra_args=["--http-max-input-size", str(1 << 26)]) as server:
            for concurrency in args.concurrency:
                for transport in TRANSPORTS:
                    rows.append(run(transport, concurrency, args.requests, server, work))
                    r = rows[-1]
                    print(f"{transport:16s} c={concurrency:<3d} p50 {r['p50_us']:8.1f} us  "
                          f"p99 {r['p99_us']:8.1f} us  compute p50 "
                          f"{r['server_compute_p50_us'] or 0:6.1f} us  overhead p50 "
                          f"{r['overhead_p50_us']:8.1f} us  server receive p50 "
                          f"{r['server_receive_p50_us'] or 0:6.1f} us  client CPU "
                          f"{r['client_cpu_us_per_request']:7.1f} us/req  "
                          f"{r['throughput_rps']:7.0f} req/s", flush=True)
        result = {"cpu": cpu_model(), "cores": os.cpu_count(), "input_bytes": BYTES,
                  "requests_per_run": args.requests, "rows": rows}
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
        print(f"CPU: {result['cpu']} ({result['cores']} logical CPUs); written to {args.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
