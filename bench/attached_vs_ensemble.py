#!/usr/bin/python3
"""The same pipeline as an ensemble and as steps attached to the model: what each costs.

    /usr/bin/python3 bench/attached_vs_ensemble.py [--requests N] [--rounds R]

Starts `build/brigade serve` on the demo repository (models/) and sends the same Fashion-MNIST
PNGs (Debian's dataset-fashion-mnist, encoded by PIL) one at a time on one keep-alive HTTP
connection (binary extension) to

  fashion_mnist_png       ensemble: decode step -> CNN -> top-1 step, each a model with a queue
  fashion_mnist_attached  the same CNN with the decode attached as preprocess and the top-1 as
                          postprocess (no queue of their own)
  fashion_mnist_onnx      the CNN alone, fed the FP32 tensor (the floor: no processing)

and prints p50/p99 latency and the server's CPU per request (utime+stime of the server process
from /proc/PID/stat over the requests), per model, for each round, interleaved so machine noise
hits all alike. Prints the CPU model name.
"""
import argparse
import gzip
import http.client
import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASET = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def body_for(model, pixels):
    if model == "fashion_mnist_onnx":
        raw = (pixels.astype(np.float32) / 255).astype("<f4").tobytes()
        inputs = [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                   "parameters": {"binary_data_size": len(raw)}}]
    else:
        buffer = io.BytesIO()
        Image.fromarray(pixels, mode="L").save(buffer, format="PNG")
        png = buffer.getvalue()
        raw = struct.pack("<I", len(png)) + png
        inputs = [{"name": "IMAGE", "datatype": "BYTES", "shape": [1, 1],
                   "parameters": {"binary_data_size": len(raw)}}]
    head = json.dumps({"inputs": inputs}).encode()
    return head + raw, {"Content-Type": "application/octet-stream",
                        "Inference-Header-Content-Length": str(len(head))}


def run(port, pid, model, bodies):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies = []
    cpu0 = server_cpu_s(pid)
    for body, headers in bodies:
        start = time.perf_counter()
        connection.request("POST", f"/v2/models/{model}/infer", body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        latencies.append(time.perf_counter() - start)
        if response.status != 200:
            raise RuntimeError(f"{model}: HTTP {response.status}: {answer[:200]!r}")
    cpu = server_cpu_s(pid) - cpu0
    connection.close()
    latencies.sort()
    return (latencies[len(latencies) // 2] * 1e6, latencies[int(0.99 * len(latencies))] * 1e6,
            cpu / len(bodies) * 1e6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with gzip.open(DATASET) as f:
        data = f.read()
    images = [np.frombuffer(data, np.uint8, 784, 16 + 784 * i).reshape(28, 28)
              for i in range(args.requests)]
    models = ["fashion_mnist_png", "fashion_mnist_attached", "fashion_mnist_onnx"]
    bodies = {m: [body_for(m, image) for image in images] for m in models}
    port = free_port()
    server = subprocess.Popen(
        [os.path.join(ROOT, "build", "brigade"), "serve", "--model-repository",
         os.path.join(ROOT, "models"), "--http-port", str(port), "--grpc-port", str(free_port())],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                c.request("GET", "/v2/health/ready")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                    if line.startswith("model name")), "unknown")
        print(f"CPU: {cpu}, {os.cpu_count()} cores; {args.requests} requests per model and "
              f"round, c=1, HTTP binary\n")
        print("| round | model | p50 us | p99 us | server CPU us/req |")
        print("|---:|---|---:|---:|---:|")
        for m in models:
            run(port, server.pid, m, bodies[m][:100])  # warm-up
        for r in range(args.rounds):
            for m in models:
                p50, p99, cpu_us = run(port, server.pid, m, bodies[m])
                print(f"| {r + 1} | {m} | {p50:.0f} | {p99:.0f} | {cpu_us:.0f} |", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
