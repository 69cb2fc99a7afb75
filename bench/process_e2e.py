#!/usr/bin/python3
"""The image demo end to end: JPEG in the request against the client-preprocessed FP32 tensor.

    /usr/bin/python3 bench/process_e2e.py [--requests N] [--port P]

Starts `build/brigade serve` on the demo repository (models/; scripts/setup writes its ResNet-18)
and, for each concurrency c in (1, 16), sends the same photos two ways:

  jpeg    the encoded photo as the BYTES input of imagenet_classify (pre-processing, ResNet-18
          and top-5 in the server), binary extension, JSON outputs;
  tensor  the client decodes, resizes and normalises with PIL + torchvision (Debian's
          python3-pil, python3-torchvision) and sends the FP32 [1, 3, 224, 224] tensor to
          imagenet_resnet18 (binary), then takes the top 5 itself: what a client does without
          server-side processing. Its latency includes the client's pre-processing.

Prints, per way and concurrency: request bytes on the wire (body + headers, mean), p50/p99
latency, throughput, and the client's CPU per request (this process's user+sys time over the
requests). Clients are threads with one keep-alive connection each (http.client). Photos: the
JPEGs of opencv-doc's examples/data. Prints the CPU model name; figures are for that machine.
"""
import argparse
import glob
import http.client
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import numpy as np
from PIL import Image
from torchvision import transforms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHOTOS = sorted(glob.glob("/usr/share/doc/opencv-doc/examples/data/*.jpg"))
TRANSFORM = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                                transforms.ToTensor(),
                                transforms.Normalize([0.485, 0.456, 0.406],
                                                     [0.229, 0.224, 0.225])])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary_body(header, raw):
    head = json.dumps(header).encode()
    return head + raw, {"Content-Type": "application/octet-stream",
                        "Inference-Header-Content-Length": str(len(head))}


def jpeg_request(jpeg):
    raw = struct.pack("<I", len(jpeg)) + jpeg
    return "/v2/models/imagenet_classify/infer", *binary_body(
        {"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1, 1],
                     "parameters": {"binary_data_size": len(raw)}}],
         "outputs": [{"name": "LABELS"}, {"name": "PROBABILITIES"}]}, raw)


def tensor_request(jpeg):
    import io
    tensor = TRANSFORM(Image.open(io.BytesIO(jpeg)).convert("RGB")).numpy()
    raw = tensor.astype("<f4").tobytes()
    return "/v2/models/imagenet_resnet18/infer", *binary_body(
        {"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 3, 224, 224],
                     "parameters": {"binary_data_size": len(raw)}}],
         "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}, raw)


def top5_from_logits(body, headers):
    length = int(headers["Inference-Header-Content-Length"])
    logits = np.frombuffer(body[length:], dtype="<f4")
    e = np.exp(logits - logits.max())
    probabilities = e / e.sum()
    return np.argsort(-probabilities)[:5]


def run(port, way, photos, concurrency, requests):
    latencies, wire = [], []
    lock = threading.Lock()
    counter = iter(range(requests))

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            jpeg = photos[i % len(photos)]
            start = time.perf_counter()
            path, body, headers = (jpeg_request if way == "jpeg" else tensor_request)(jpeg)
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            answer = response.read()
            if response.status != 200:
                raise RuntimeError(f"{way}: HTTP {response.status}: {answer[:200]!r}")
            if way == "tensor":
                top5_from_logits(answer, response.headers)
            elapsed = time.perf_counter() - start
            header_bytes = sum(len(k) + len(v) + 4 for k, v in headers.items()) + len(path) + 60
            with lock:
                latencies.append(elapsed)
                wire.append(len(body) + header_bytes)
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3
    return {"bytes": sum(wire) / len(wire), "p50": p(0.50), "p99": p(0.99),
            "rps": len(latencies) / wall, "client_cpu_ms": cpu / len(latencies) * 1e3}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    photos = [open(p, "rb").read() for p in PHOTOS]
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
        print(f"CPU: {cpu}, {os.cpu_count()} cores; {len(photos)} photos (opencv-doc), "
              f"{args.requests} requests per row\n")
        print("| way | c | request bytes | p50 ms | p99 ms | req/s | client CPU ms/req |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for concurrency in (1, 16):
            for way in ("jpeg", "tensor"):
                run(port, way, photos, concurrency, 8)  # warm-up
                r = run(port, way, photos, concurrency, args.requests)
                print(f"| {way} | {concurrency} | {r['bytes']:.0f} | {r['p50']:.1f} | "
                      f"{r['p99']:.1f} | {r['rps']:.1f} | {r['client_cpu_ms']:.2f} |", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
