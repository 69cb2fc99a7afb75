#!/usr/bin/python3
"""Per-request latency of the text demo, one sentence per request, one request in flight.

Serves models/text_{tokenizer,classifier,top3,classify} and sends the first --requests
descriptions of data/debian_sections/test.tsv (cycling when asked for more), one at a time on one
keep-alive HTTP connection, to
  text_classify    the ensemble, the raw sentence as JSON BYTES and as a binary BYTES tensor;
  text_tokenizer   the WordPiece step alone (binary);
  text_classifier  the ONNX model alone, fed ids the server's own tokenizer gave (binary);
and prints each one's p50, p90, p99 and mean client-side latency in microseconds, after --warmup
requests, --rounds times. Printed, not asserted. The server inherits the environment: on a
busy machine run it with OMP_WAIT_POLICY=PASSIVE ("Threads" in src/engine/onnx/README.md), or
libgomp's spinning threads can stall the ONNX classifier by milliseconds now and then.
Usage: bench/text_classify.py [--brigade PATH] [--requests N] [--rounds N]
"""

import argparse
import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ("text_tokenizer", "text_classifier", "text_top3", "text_classify")
MAX_LENGTH = 128


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary_body(inputs, outputs):
    """inputs: [(name, datatype, shape, raw)]; returns (body, header length)."""
    header = json.dumps({
        "inputs": [{"name": n, "datatype": d, "shape": s,
                    "parameters": {"binary_data_size": len(r)}} for n, d, s, r in inputs],
        "outputs": [{"name": n, "parameters": {"binary_data": True}} for n in outputs]}).encode()
    return header + b"".join(r for _, _, _, r in inputs), len(header)


def text_input(text):
    raw = text.encode("utf-8")
    return ("TEXT", "BYTES", [1, 1], struct.pack("<I", len(raw)) + raw)


class Client:
    def __init__(self, port):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, model, body, header_length=None):
        headers = {"Content-Type": "application/json"}
        if header_length is not None:
            headers = {"Content-Type": "application/octet-stream",
                       "Inference-Header-Content-Length": str(header_length)}
        self.connection.request("POST", f"/v2/models/{model}/infer", body, headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{model}: HTTP {response.status}: {data[:300]!r}")
        length = response.getheader("Inference-Header-Content-Length")
        return data if length is None else data[int(length):]


def percentile(sorted_values, p):
    index = int(round(p / 100 * (len(sorted_values) - 1)))
    return sorted_values[min(len(sorted_values) - 1, index)]


def measure(client, label, requests, warmup):
    for model, body, length in requests[:warmup]:
        client.post(model, body, length)
    times = []
    for model, body, length in requests:
        start = time.perf_counter_ns()
        client.post(model, body, length)
        times.append((time.perf_counter_ns() - start) / 1000)
    times.sort()
    print(f"{label:34} p50 {percentile(times, 50):7.0f}  p90 {percentile(times, 90):7.0f}  "
          f"p99 {percentile(times, 99):7.0f}  mean {sum(times) / len(times):7.0f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--brigade", default=os.environ.get("BRIGADE_BIN",
                                                           os.path.join(ROOT, "build", "brigade")))
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2,
                        help="the four measurements, repeated (a busy machine shows in the spread)")
    args = parser.parse_args()

    with open(os.path.join(ROOT, "data", "debian_sections", "test.tsv"), encoding="utf-8") as f:
        texts = [line.rstrip("\n").partition("\t")[2] for line in f]
    texts = [texts[i % len(texts)] for i in range(args.requests)]

    work = tempfile.mkdtemp(prefix="brigade-text-bench-")
    server = None
    try:
        for model in MODELS:
            # Copied: the server refuses a link out of its repository.
            shutil.copytree(os.path.join(ROOT, "models", model), os.path.join(work, model))
        http_port, grpc_port = free_port(), free_port()
        server = subprocess.Popen(
            [args.brigade, "serve", "--model-repository", work, "--http-address", "127.0.0.1",
             "--http-port", str(http_port), "--grpc-address", "127.0.0.1", "--grpc-port",
             str(grpc_port), "--log-level", "warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                url = f"http://127.0.0.1:{http_port}/v2/models/text_classify/ready"
                if urllib.request.urlopen(url, timeout=1).status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit("brigade did not become ready")
            time.sleep(0.2)

        client = Client(http_port)
        # Bytes, not str: http.client sends a str body in a second write, and Nagle's algorithm
        # then holds it until the server's delayed ACK (tens of milliseconds).
        json_requests = [("text_classify", json.dumps({"inputs": [
            {"name": "TEXT", "datatype": "BYTES", "shape": [1, 1], "data": [t]}]}).encode(),
            None) for t in texts]
        binary = [("text_classify",) + binary_body([text_input(t)], ["LOGITS", "LABELS"])
                  for t in texts]
        tokenizer = [("text_tokenizer",) + binary_body([text_input(t)],
                                                       ["input_ids", "attention_mask"])
                     for t in texts]
        classifier = []
        for _, body, length in tokenizer:
            raw = client.post("text_tokenizer", body, length)
            half = MAX_LENGTH * 8
            classifier.append(("text_classifier",) + binary_body(
                [("input_ids", "INT64", [1, MAX_LENGTH], raw[:half]),
                 ("attention_mask", "INT64", [1, MAX_LENGTH], raw[half:])], ["logits"]))

        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model_name = next((line.split(":", 1)[1].strip() for line in cpu.splitlines()
                           if line.startswith("Model name")), "?")
        load = os.getloadavg()[0]
        wait_policy = os.environ.get("OMP_WAIT_POLICY", "unset")
        print(f"# text demo, {len(texts)} requests c=1, one sentence each, HTTP keep-alive; "
              f"{model_name}, {os.cpu_count()} CPUs, load average {load:.2f}, "
              f"OMP_WAIT_POLICY {wait_policy}; microseconds")
        for round_number in range(1, args.rounds + 1):
            print(f"round {round_number}")
            measure(client, "text_classify (JSON BYTES)", json_requests, args.warmup)
            measure(client, "text_classify (binary BYTES)", binary, args.warmup)
            measure(client, "text_tokenizer alone (binary)", tokenizer, args.warmup)
            measure(client, "text_classifier alone (binary ids)", classifier, args.warmup)
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
