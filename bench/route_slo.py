#!/usr/bin/python3
"""SLO-aware variant selection under a load ramp: the router against the accurate variant alone.

    /usr/bin/python3 bench/route_slo.py [--duration-s S] [--slo-us U] [--capacity R] [--brigade PATH]

Starts `build/brigade serve` on the demo repository (models/; with --slo-us, on a copy whose
fashion_mnist_slo router has that routing.slo.target_p99_microseconds) and finds the Fashion-MNIST
CNN's capacity under the SLO: the highest open-loop Poisson rate at which `fashion_mnist` alone
keeps its p99 within the SLO (doubling from 250 req/s, then bisecting; 2 s probes). A closed-loop
figure (c=8, as this benchmark used before) understates what the CNN sustains once its batches
grow and says nothing about the SLO. Then, for open-loop Poisson arrivals at 50, 75, 100, 125,
150 and 200% of that capacity (`brigade bench --rate R --arrival poisson`), it loads

  fashion_mnist        the accurate variant alone (91.9% on the test set)
  fashion_mnist_slo    the router: the CNN while its scheduler predicts the request meets the
                       SLO (routing.slo.target_p99_microseconds), else the small model (88.8%)

and prints per step: p99, failures, the client's own send lag p99 (the load generator shares the
cores: latency counts from the intended send time, so a late send counts against the server),
and for the router the share of requests the CNN served (brigade_route_decisions_total from
/metrics, before and after the step) and the accuracy that share implies. The CPU model is
printed.
"""
import argparse
import json
import os
import re
import shutil
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


def capacity_under_slo(port, slo_us, probe_s):
    """The highest Poisson rate (req/s) at which the CNN alone keeps p99 within slo_us."""
    def meets(rate):
        level = bench(port, "fashion_mnist", ["--rate", f"{rate:.0f}", "--arrival", "poisson"],
                      probe_s)
        return level["latency_us"]["p99"] <= slo_us and level["failed"] == 0

    low, high = 0.0, 250.0
    while meets(high):
        low, high = high, high * 2
        if high > 100_000:
            return low
    for _ in range(4):  # to within 1/16 of the bracket
        middle = (low + high) / 2
        if meets(middle):
            low = middle
        else:
            high = middle
    return low


def repository(slo_us):
    """models/, or a copy (links to the models) whose router has target p99 slo_us."""
    models = os.path.join(ROOT, "models")
    if slo_us is None:
        return models, None
    copy = tempfile.mkdtemp(prefix="route_slo_")
    for name in os.listdir(models):
        if name != "fashion_mnist_slo":
            os.symlink(os.path.join(models, name), os.path.join(copy, name))
    os.makedirs(os.path.join(copy, "fashion_mnist_slo", "1"))
    with open(os.path.join(models, "fashion_mnist_slo", "config.pbtxt")) as f:
        config = re.sub(r"target_p99_microseconds:\s*\d+", f"target_p99_microseconds: {slo_us}",
                        f.read())
    with open(os.path.join(copy, "fashion_mnist_slo", "config.pbtxt"), "w") as f:
        f.write(config)
    return copy, copy


def main():
    global BRIGADE
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration-s", type=float, default=4)
    parser.add_argument("--brigade", default=BRIGADE, help="the brigade binary (default build/)")
    parser.add_argument("--capacity", type=float, default=None,
                        help="req/s taken as 100%% instead of searching (to compare two builds)")
    parser.add_argument("--slo-us", type=int, default=None,
                        help="the router's target p99 (default: the demo config's)")
    args = parser.parse_args()
    BRIGADE = args.brigade
    models, copy = repository(args.slo_us)
    port = free_port()
    server = subprocess.Popen([BRIGADE, "serve", "--model-repository", models,
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
        with open(os.path.join(models, "fashion_mnist_slo", "config.pbtxt")) as f:
            slo_us = int(re.search(r"target_p99_microseconds:\s*(\d+)", f.read()).group(1))
        closed = bench(port, "fashion_mnist", ["--concurrency", "8"],
                       args.duration_s)["throughput_per_s"]
        capacity = args.capacity or capacity_under_slo(port, slo_us, 2)
        print(f"CPU: {cpu}, {os.cpu_count()} cores; SLO p99 {slo_us} us; fashion_mnist capacity "
              f"under the SLO {capacity:.0f} req/s (open loop, Poisson; closed loop c=8: "
              f"{closed:.0f} req/s); {args.duration_s:g} s per step\n")
        print("| load | rate req/s | CNN alone p99 us | CNN alone failed | CNN alone send lag p99 us "
              "| router p99 us | router failed | router send lag p99 us | CNN share "
              "| implied accuracy |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
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
                  f"{alone['failed']} | {alone['send_lag_us']['p99']:.0f} | "
                  f"{routed['latency_us']['p99']:.0f} | {routed['failed']} | "
                  f"{routed['send_lag_us']['p99']:.0f} | {share:.1%} | {accuracy:.2%} |",
                  flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        if copy is not None:
            shutil.rmtree(copy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
