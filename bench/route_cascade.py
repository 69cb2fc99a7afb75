#!/usr/bin/env python3
"""Confidence cascade on the Fashion-MNIST demo: the small model, then the CNN when unsure.

Serves models/fashion_mnist_small, models/fashion_mnist (the CNN) and the cascade router
models/fashion_mnist_cascade, then
  1. sends each of the 10,000 test images (Debian's dataset-fashion-mnist) once to the small
     model, the CNN and the cascade (one image per request, 16 in flight) and prints each one's
     accuracy, and for the cascade the share of requests it escalated to the CNN;
  2. prints, from the small model's and the CNN's answers, the accuracy and escalated share the
     cascade would have at other thresholds (what `routing.cascade.threshold` trades);
  3. runs `brigade bench` closed loop at concurrency 16 on the same images for the small
     model alone, the CNN alone and the cascade, and prints each one's throughput, the server's
     CPU per request (utime + stime of the server process from /proc/PID/stat over the measured
     run, a warm-up run left out, divided by the requests answered: steadier than wall time on
     a shared machine) and the cascade's throughput against the CNN's. With --batch-size B > 1
     each request carries B consecutive test images, so the cascade sends only a batch's
     uncertain rows to the CNN; throughput is then counted in images per second.
With --baseline PATH a second server (that binary, same repository) is started beside the
first and every throughput run is made on both, one after the other, so that two builds
compare within one run. --throughput-only skips 1. and 2. --intra-op-threads N serves both
models with N intra-op threads per instance (instance_group intra_op_threads; by default the
scheduler gives each model's instance all the cores: 2 OpenMP threads per model here). The
server inherits the environment (OMP_WAIT_POLICY, GOMP_SPINCOUNT).
Printed, not asserted.
Usage: bench/route_cascade.py [--brigade PATH] [--baseline PATH] [--duration-s N]
                              [--batch-size B] [--throughput-only] [--intra-op-threads N]
"""

import argparse
import concurrent.futures
import gzip
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASET = "/usr/share/datasets/fashion-mnist"
MODELS = ("fashion_mnist_small", "fashion_mnist", "fashion_mnist_cascade")


def load_test_set():
    with gzip.open(f"{DATASET}/t10k-images-idx3-ubyte.gz", "rb") as f:
        _, count, _, _ = struct.unpack(">IIII", f.read(16))
        raw = f.read(count * 784)
    with gzip.open(f"{DATASET}/t10k-labels-idx1-ubyte.gz", "rb") as f:
        f.read(8)
        labels = list(f.read(count))
    images = [struct.pack("<784f", *(b / 255.0 for b in raw[i * 784:(i + 1) * 784]))
              for i in range(count)]
    return images, labels


def write_npy(path, data, shape):
    """Writes little-endian float32 `data` of `shape` as a version 1.0 .npy file."""
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"  # pad the preamble to 64 bytes
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def infer(port, model, image):
    header = json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 28, 28],
                                     "parameters": {"binary_data_size": len(image)}}],
                         "outputs": [{"name": "logits", "parameters": {"binary_data": False}}]})
    body = header.encode() + image
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v2/models/{model}/infer", data=body,
        headers={"Inference-Header-Content-Length": str(len(header)),
                 "Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    return answer["outputs"][0]["data"], answer.get("parameters", {})


def start_server(brigade, repo):
    """Starts `brigade serve` on `repo`; returns (process, HTTP port) once the cascade is ready."""
    http_port, grpc_port = free_port(), free_port()
    server = subprocess.Popen(
        [brigade, "serve", "--model-repository", repo, "--http-address", "127.0.0.1",
         "--http-port", str(http_port), "--grpc-address", "127.0.0.1", "--grpc-port",
         str(grpc_port), "--log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while True:
        try:
            url = f"http://127.0.0.1:{http_port}/v2/models/fashion_mnist_cascade/ready"
            if urllib.request.urlopen(url, timeout=1).status == 200:
                return server, http_port
        except OSError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            server.kill()
            sys.exit(f"{brigade} did not become ready")
        time.sleep(0.2)


def cpu_ticks(pid):
    """utime + stime of process `pid`, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted from 1


def softmax_top(logits):
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    return max(range(len(logits)), key=lambda k: logits[k]), max(exps) / sum(exps)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--brigade", default=os.environ.get("BRIGADE_BIN",
                                                           os.path.join(ROOT, "build", "brigade")))
    parser.add_argument("--duration-s", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=1,
                        help="images per request in the throughput runs (1 to 32)")
    parser.add_argument("--baseline", help="a second brigade binary measured beside the first")
    parser.add_argument("--throughput-only", action="store_true",
                        help="skip the accuracy and threshold tables")
    parser.add_argument("--intra-op-threads", type=int, default=0,
                        help="intra-op threads per model instance (0: the scheduler's default)")
    args = parser.parse_args()
    if not 1 <= args.batch_size <= 32:
        sys.exit("--batch-size must be within 1..32 (the demo models' max_batch_size)")

    work = tempfile.mkdtemp(prefix="brigade-cascade-")
    servers = {}
    try:
        repo = os.path.join(work, "repo")
        os.makedirs(repo)
        for model in MODELS:
            # Copied: the server refuses a link out of its repository.
            shutil.copytree(os.path.join(ROOT, "models", model), os.path.join(repo, model))
            config = os.path.join(repo, model, "config.pbtxt")
            if args.intra_op_threads > 0 and model != "fashion_mnist_cascade":
                with open(config) as f:
                    text = f.read()
                if "kind: KIND_CPU" not in text or "intra_op_threads" in text:
                    sys.exit(f"{config}: cannot set intra_op_threads")
                with open(config, "w") as f:
                    f.write(text.replace("kind: KIND_CPU", "kind: KIND_CPU\n    intra_op_threads: "
                                         f"{args.intra_op_threads}", 1))
        images, labels = load_test_set()
        samples = os.path.join(work, "samples")
        os.makedirs(samples)
        if args.batch_size == 1:
            for i, image in enumerate(images):
                with open(os.path.join(samples, f"{i:05d}.bin"), "wb") as f:
                    f.write(image)
        else:
            # One .npy of B consecutive images per sample, shape [B, 1, 28, 28].
            for first in range(0, len(images) - args.batch_size + 1, args.batch_size):
                write_npy(os.path.join(samples, f"{first:05d}.npy"),
                          b"".join(images[first:first + args.batch_size]),
                          (args.batch_size, 1, 28, 28))
        servers = {"": start_server(args.brigade, repo)}
        if args.baseline:
            servers["baseline"] = start_server(args.baseline, repo)
        http_port = servers[""][1]

        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model_name = next((l.split(":", 1)[1].strip() for l in lscpu.splitlines()
                           if l.startswith("Model name")), "?")
        print(f"# cascade on Fashion-MNIST — {model_name}, {os.cpu_count()} CPUs; "
              f"{len(images)} test images, one per request, 16 in flight; load average "
              f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
        if not args.throughput_only:
            answers = {}
            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                for model in MODELS:
                    answers[model] = list(pool.map(lambda image: infer(http_port, model, image),
                                                   images))
            for model in MODELS:
                correct = sum(max(range(10), key=lambda k: logits[k]) == label
                              for (logits, _), label in zip(answers[model], labels))
                line = f"{model:24} accuracy {100 * correct / len(labels):.2f}%"
                if model == "fashion_mnist_cascade":
                    escalated = sum(p.get("cascade") == "escalated" for _, p in answers[model])
                    line += f", escalated {100 * escalated / len(labels):.1f}% to the CNN"
                print(line)

            print("\n# the same answers at other thresholds "
                  "(small model's top softmax probability)")
            print(f"{'threshold':>9} {'accuracy':>9} {'escalated':>10}")
            small = [softmax_top(logits) for logits, _ in answers["fashion_mnist_small"]]
            cnn = [max(range(10), key=lambda k: logits[k])
                   for logits, _ in answers["fashion_mnist"]]
            for tau in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99):
                correct = escalated = 0
                for (small_class, p), cnn_class, label in zip(small, cnn, labels):
                    if p < tau:
                        escalated += 1
                        correct += cnn_class == label
                    else:
                        correct += small_class == label
                print(f"{tau:>9.2f} {100 * correct / len(labels):>8.2f}% "
                      f"{100 * escalated / len(labels):>9.1f}%")

        rows = args.batch_size
        print(f"\n# closed loop, concurrency 16, {args.duration_s} s, HTTP binary, same images, "
              f"{rows} per request; intra-op threads {args.intra_op_threads or 'default'}, "
              f"OMP_WAIT_POLICY {os.environ.get('OMP_WAIT_POLICY', 'unset')}")
        hz = os.sysconf("SC_CLK_TCK")
        throughput = {}
        cpu = {}
        for model in ("fashion_mnist_small", "fashion_mnist", "fashion_mnist_cascade"):
            for name, (server, port) in servers.items():
                bench = [args.brigade, "bench", "-m", model, "-i", "http", "-u",
                         f"127.0.0.1:{port}", "--http-binary", "--input-dir", samples,
                         "--concurrency", "16", "--warmup-s", "0", "--format", "json",
                         "--no-progress"]
                # Warm-up outside the CPU window, then the measured run alone.
                subprocess.run(bench + ["--duration-s", "2", "-o", os.devnull], check=True)
                report = os.path.join(work, f"{model}{name}.json")
                before = cpu_ticks(server.pid)
                subprocess.run(bench + ["--duration-s", str(args.duration_s), "-o", report],
                               check=True)
                ticks = cpu_ticks(server.pid) - before
                level = json.load(open(report))["levels"][0]
                answered = level["ok"] + level["failed"]
                key = (model, name)
                throughput[key] = level["throughput_per_s"] * rows
                cpu[key] = ticks * 1e6 / hz / answered if answered else float("nan")
                label = f"{model} ({name})" if name else model
                print(f"{label:33} {level['throughput_per_s']:8.0f} req/s "
                      f"{level['throughput_per_s'] * rows:8.0f} images/s  p50 "
                      f"{level['latency_us']['p50']:8.0f} µs  p99 "
                      f"{level['latency_us']['p99']:8.0f} µs  server CPU "
                      f"{cpu[key]:7.1f} µs/req" + (f" ({level['failed']} failed)"
                                                   if level["failed"] else ""))
        for name in servers:
            label = f" ({name})" if name else ""
            cascade, cnn = ("fashion_mnist_cascade", name), ("fashion_mnist", name)
            small = ("fashion_mnist_small", name)
            print(f"cascade / CNN throughput{label}: {throughput[cascade] / throughput[cnn]:.2f}x;"
                  f" server CPU per request: cascade {cpu[cascade]:.1f} µs, small "
                  f"{cpu[small]:.1f} µs, CNN {cpu[cnn]:.1f} µs")
    finally:
        for server, _ in servers.values():
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
