#!/usr/bin/python3
"""SLO-aware variant selection under a load ramp: the router against the accurate variant alone.

    /usr/bin/python3 bench/route_slo.py [--duration-s S] [--slo-us U]

Starts `build/brigade serve` on the demo repository (models/) and measures the Fashion-MNIST
CNN's capacity (`fashion_mnist`, closed loop, `brigade bench --concurrency 8`). Then, for open-
loop Poisson arrivals at 50, 75, 100, 125, 150 and 200% of that capacity (`brigade bench --rate
R --arrival poisson`), it loads

  fashion_mnist        the accurate variant alone (91.9% on the test set)
  fashion_mnist_slo    the router: the CNN while its scheduler predicts the request meets the
                       SLO (routing.slo.target_p99_microseconds), else the small model (88.8%)

and prints per step: achieved rate, p99, failures, and for the router the share of requests the
CNN served (brigade_route_decisions_total from /metrics, before and after the step) and the
accuracy that share implies. Client and server share the machine's cores; the CPU model is
printed.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRIGADE = os.path.join(ROOT, "build", "brigade")
ACCURACY = {"cnn": 0.9192, "small": 0.888}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench(port, model, extra, duration_s):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([BRIGADE, "bench", "-m", model, "-u", f"127.0.0.1:{port}",
                        "--warmup-s", "1", "--duration-s", str(duration_s), "-f", "json",
                        "-o", out.name, "--no-progress", "--no-server-stats"] + extra,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.load(open(out.name))["levels"][0]


def decisions(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    counts = {}
    for line in text.splitlines():
        if line.startswith("brigade_route_decisions_total{") and 'model="fashion_mnist_slo"' in line:
            variant = re.search(r'variant="([^"]+)"', line).group(1)
            counts[variant] = counts.get(variant, 0) + float(line.rsplit(" ", 1)[1])
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration-s", type=float, default=4)
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([BRIGADE, "serve", "--model-repository", os.path.join(ROOT, "models"),
                               "--http-port", str(port), "--grpc-port", str(free_port())],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/health/ready", timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                    if line.startswith("model name")), "unknown")
        with open(os.path.join(ROOT, "models", "fashion_mnist_slo", "config.pbtxt")) as f:
            slo_us = int(re.search(r"target_p99_microseconds:\s*(\d+)", f.read()).group(1))
        capacity = bench(port, "fashion_mnist", ["--concurrency", "8"],
                         args.duration_s)["throughput_per_s"]
        print(f"CPU: {cpu}, {os.cpu_count()} cores; fashion_mnist capacity {capacity:.0f} req/s "
              f"(closed loop, c=8); SLO p99 {slo_us} us; {args.duration_s:g} s per step\n")
        print("| load | rate req/s | CNN alone p99 us | CNN alone failed | router p99 us | "
              "router failed | CNN share | implied accuracy |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for fraction in (0.5, 0.75, 1.0, 1.25, 1.5, 2.0):
            rate = capacity * fraction
            extra = ["--rate", f"{rate:.0f}", "--arrival", "poisson"]
            alone = bench(port, "fashion_mnist", extra, args.duration_s)
            before = decisions(port)
            routed = bench(port, "fashion_mnist_slo", extra, args.duration_s)
            after = decisions(port)
            served = {v: after.get(v, 0) - before.get(v, 0) for v in after}
            total = sum(served.values()) or 1
            share = served.get("cnn", 0) / total
            accuracy = sum(ACCURACY.get(v, 0) * n for v, n in served.items()) / total
            print(f"| {fraction:.0%} | {rate:.0f} | {alone['latency_us']['p99']:.0f} | "
                  f"{alone['failed']} | {routed['latency_us']['p99']:.0f} | {routed['failed']} | "
                  f"{share:.1%} | {accuracy:.2%} |", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
