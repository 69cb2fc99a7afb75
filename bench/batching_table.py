#!/usr/bin/python3
"""Batching policies on `brigade serve`, each p99 judged against the best constant policy with a
bootstrap confidence interval. Printed, never asserted.

    /usr/bin/python3 bench/batching_table.py
        [--models models/fashion_mnist_onnx,models/fashion_mnist,bench/models/resnet50.onnx@500000]
        [--loads 50,80,95] [--repeats 9] [--duration-s 8] [--warmup-s 2] [--slo-us 20000]
        [--instances 1] [--policies none,fixed500,fixed2000,fixed8000,formula,p99]

For each model folder (a config.pbtxt and its version folders; or a bare .onnx file such as
bench/models/make_models.py writes, served with --onnx-max-batch) the script writes one model
repository per policy into a temporary folder, the same model with only its batching section and
instance group rewritten:

    none        no batching: each request runs alone (no dynamic_batching section)
    fixedD      Triton's dynamic batcher, max_queue_delay_microseconds D (e.g. fixed2000)
    formula     the seeds' formula, adaptive_batching QUEUE_FORMULA (B = min(Bmax, ceil(Q/(1+L))))
    p99         the P99 model, adaptive_batching P99_MODEL (src/scheduler/p99_model_policy.h)

The constant policies are `none` and the fixed delays: what a user could pick in hindsight.

Capacity, per model, each the median of --capacity-repeats closed-loop runs, in rows per second:
  batch-1      single-row requests, no batching (one execution per request);
  full-batch   requests of max_batch_size rows each, no batching: the model's batched rate;
  served       single-row requests with a fixed 8 ms delay and enough of them in flight to fill
               every batch (--capacity-concurrency): the most the server gets out of batching
               single-row requests, per-request costs (HTTP, decoding, answers) included.
"headroom" = full-batch / batch-1, what batching can buy this model on this CPU; "served
headroom" = served / batch-1, what it buys through the front end. Loads are percentages of
max(served, batch-1): the best throughput single-row requests reach.

Each run starts a fresh `brigade serve` (so every policy learns from nothing), then runs the load
generator in its own process: `brigade bench --rate R --arrival poisson --seed S` for warm-up plus
duration seconds (latency counts from each request's intended send time). Within one repeat every
policy sees the same Poisson schedule (same seed), in a shuffled order; repeats use new seeds.
The hypervisor's steal time (/proc/stat) is read around each measured run, and so is the CPU that
processes other than this server and load generator used meanwhile (in cores; on a quiet machine
~0): figures from runs where it is not near 0 were measured beside other work.

Per (model, load, policy): the median p99 over the repeats, and its ratio to the best constant
policy's median p99 (the best picked per bootstrap sample, so the constants' own ratios are >= 1),
with a 90% interval from a paired bootstrap over the repeats (a repeat's runs were made close in
time, so they are resampled together). Each run's JSON report is kept under --out-dir.
"""
import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONSTANT_PREFIXES = ("none", "fixed")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return "unknown"


def steal_ms():
    """The machine's total steal time so far, in ms (/proc/stat's cpu line, USER_HZ ticks)."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    ticks = int(fields[8]) if len(fields) > 8 else 0
    return ticks * 1000.0 / os.sysconf("SC_CLK_TCK")


def busy_cpu_s():
    """CPU seconds every process has run so far (/proc/stat's cpu line less idle and iowait)."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid):
    """User + system CPU seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def strip_block(text, keyword):
    """Removes every `keyword { ... }` or `keyword [ ... ]` block (nesting-aware) from pbtxt."""
    while True:
        match = re.search(r"^\s*" + keyword + r"\s*:?\s*([\[{])", text, re.M)
        if match is None:
            return text
        depth, i = 0, match.start(1)
        pairs = {"{": "}", "[": "]"}
        opener = match.group(1)
        while i < len(text):
            if text[i] == opener:
                depth += 1
            elif text[i] == pairs[opener]:
                depth -= 1
                if depth == 0:
                    break
            i += 1
        text = text[:match.start()] + text[i + 1:]


def policy_config(base, policy, slo_us, instances, intra_op_threads):
    text = "\n".join(line for line in base.splitlines() if not line.lstrip().startswith("#"))
    for keyword in ("dynamic_batching", "adaptive_batching", "instance_group"):
        text = strip_block(text, keyword)
    text = text.rstrip() + "\n"
    if policy.startswith("fixed"):
        text += "dynamic_batching {\n  max_queue_delay_microseconds: %d\n}\n" % int(policy[5:])
    elif policy == "formula":
        text += ("adaptive_batching {\n  policy: QUEUE_FORMULA\n  target_p99_microseconds: %d\n}\n"
                 % slo_us)
    elif policy == "p99":
        text += ("adaptive_batching {\n  policy: P99_MODEL\n  target_p99_microseconds: %d\n}\n"
                 % slo_us)
    elif policy != "none":
        raise ValueError(f"unknown policy '{policy}'")
    threads = f"\n    intra_op_threads: {intra_op_threads}" if intra_op_threads > 0 else ""
    text += ("instance_group [\n  {\n    count: %d\n    kind: KIND_CPU%s\n  }\n]\n"
             % (instances, threads))
    return text


def model_folder(entry, args, root):
    """A model folder for `entry`: itself, or for a bare .onnx file (bench/models/make_models.py
    writes those) a folder under root with the file as version 1 and a config that names only the
    platform and max_batch_size (the server completes the tensors from the model)."""
    if not entry.endswith(".onnx"):
        return entry
    name = os.path.basename(entry)[:-len(".onnx")]
    folder = os.path.join(root, "source", name)
    os.makedirs(os.path.join(folder, "1"), exist_ok=True)
    link = os.path.join(folder, "1", "model.onnx")
    if not os.path.lexists(link):
        os.symlink(os.path.abspath(entry), link)
    with open(os.path.join(folder, "config.pbtxt"), "w") as f:
        f.write(f'name: "{name}"\nplatform: "onnxruntime_onnx"\n'
                f"max_batch_size: {args.onnx_max_batch}\n")
    return folder


def make_repository(model_dir, policy, args, root):
    """root/<policy>/<model>/: the model's files linked, its config rewritten for `policy`."""
    name = os.path.basename(os.path.normpath(model_dir))
    target = os.path.join(root, policy, name)
    os.makedirs(target, exist_ok=True)
    for entry in os.listdir(model_dir):
        if entry == "config.pbtxt":
            continue
        link = os.path.join(target, entry)
        if not os.path.lexists(link):
            os.symlink(os.path.abspath(os.path.join(model_dir, entry)), link)
    with open(os.path.join(model_dir, "config.pbtxt")) as f:
        base = f.read()
    with open(os.path.join(target, "config.pbtxt"), "w") as f:
        f.write(policy_config(base, policy, args.slo_us, args.instances, args.intra_op_threads))
    return os.path.join(root, policy), name


class Server:
    """One `brigade serve` on a free loopback port; stopped with SIGTERM (SIGKILL after 20 s)."""

    def __init__(self, brigade, repository, log_path):
        self.port = free_port()
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [brigade, "serve", "--model-repository", repository, "--http-address", "127.0.0.1",
             "--http-port", str(self.port), "--allow-grpc", "false", "--metrics-port", "-1",
             "--log-level", "warn",
             # The repository links to the model files (ResNet-50's 100 MB, once per policy)
             # rather than copying them; the server refuses such links unless told.
             "--allow-symlinked-models"], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"brigade serve exited with {self.proc.returncode}; "
                                   f"see {log_path}")
            try:
                url = f"http://127.0.0.1:{self.port}/v2/health/ready"
                with urllib.request.urlopen(url, timeout=1) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"brigade serve not ready after 300 s; see {log_path}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def run_bench(args, server, model, load_args, out_path):
    """One `brigade bench` level against `server`; returns its JSON level, the steal (ms) during
    it, and the CPU other processes than the server and the load generator used meanwhile (in
    cores: a quiet machine reads ~0)."""
    command = [args.brigade, "bench", "-m", model, "-u", f"127.0.0.1:{server.port}", "-f",
               "json", "-o", out_path, "--no-progress", "--warmup-s", str(args.warmup_s),
               "--duration-s", str(args.duration_s)] + load_args
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = (steal_ms(), busy_cpu_s(), process_cpu_s(server.proc.pid), time.monotonic())
    done = subprocess.run(command, capture_output=True, text=True)
    after = (steal_ms(), busy_cpu_s(), process_cpu_s(server.proc.pid), time.monotonic())
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_s = (children_after.ru_utime + children_after.ru_stime -
                children.ru_utime - children.ru_stime)
    others_cores = ((after[1] - before[1]) - (after[2] - before[2]) - client_s) / max(
        1e-9, after[3] - before[3])
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    with open(out_path) as f:
        report = json.load(f)
    return report["levels"][0], after[0] - before[0], max(0.0, others_cores)


def measure_capacity(args, model_dir, root, out_dir, policy, concurrency, rows=1):
    """Median closed-loop rows per second of `policy` with requests of `rows` rows."""
    repository, name = make_repository(model_dir, policy, args, root)
    rates = []
    for i in range(args.capacity_repeats):
        stem = os.path.join(out_dir, f"{name}-capacity-{policy}-b{rows}-{i}")
        with Server(args.brigade, repository, stem + ".log") as server:
            level, _, _ = run_bench(args, server, name, ["--concurrency", str(concurrency),
                                                         "--batch-size", str(rows)],
                                    stem + ".json")
        rates.append(level["throughput_per_s"] * rows)
    return statistics.median(rates)


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * q
    low = int(k)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (k - low)


def ratio_to_best(p99s, policy, constants, indices):
    """median p99 of `policy` over `indices` / the lowest such median among `constants`."""
    best = min(statistics.median(p99s[c][i] for i in indices) for c in constants)
    return statistics.median(p99s[policy][i] for i in indices) / best


def bootstrap_interval(p99s, policy, constants, repeats, samples, rng):
    """5th and 95th percentiles of the ratio over paired resamples of the repeats."""
    ratios = sorted(
        ratio_to_best(p99s, policy, constants, [rng.randrange(repeats) for _ in range(repeats)])
        for _ in range(samples))
    return percentile(ratios, 0.05), percentile(ratios, 0.95)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="models/fashion_mnist_onnx,models/fashion_mnist",
                        help="comma-separated model folders (each with config.pbtxt) or .onnx "
                             "files, each optionally @SLO_US (its own --slo-us)")
    parser.add_argument("--onnx-max-batch", type=int, default=8,
                        help="max_batch_size of a model given as a bare .onnx file")
    parser.add_argument("--loads", default="50,80,95",
                        help="percent of the best single-row throughput (see Capacity)")
    parser.add_argument("--policies", default="none,fixed500,fixed2000,fixed8000,formula,p99")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--duration-s", type=float, default=8)
    parser.add_argument("--warmup-s", type=float, default=2)
    parser.add_argument("--slo-us", type=int, default=20000,
                        help="target_p99_microseconds of the formula and the P99 model")
    parser.add_argument("--instances", type=int, default=1)
    parser.add_argument("--intra-op-threads", type=int, default=1,
                        help="threads per instance (0: the engine's default, which may "
                             "oversubscribe a small machine)")
    parser.add_argument("--capacity-repeats", type=int, default=3)
    parser.add_argument("--capacity-concurrency", type=int, default=0,
                        help="requests in flight for the served capacity (0: 2 x "
                             "max_batch_size x instances)")
    parser.add_argument("--open-loop-workers", type=int, default=256)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--brigade", default=os.path.join(ROOT, "build", "brigade"))
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "out", "batching_table"))
    args = parser.parse_args()

    default_slo_us = args.slo_us
    policies = [p for p in args.policies.split(",") if p]
    constants = [p for p in policies if p.startswith(CONSTANT_PREFIXES)]
    if not constants:
        sys.exit("--policies needs at least one constant policy (none or fixedD)")
    loads = [float(x) for x in args.loads.split(",") if x]
    if args.repeats < 1:
        sys.exit("--repeats must be >= 1")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out_dir = os.path.join(args.out_dir, stamp)
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(args.seed)
    root = tempfile.mkdtemp(prefix="batching-table-")
    results = {"cpu": cpu_model(), "argv": sys.argv, "started_utc": stamp, "models": {}}
    runs_per_model = len(loads) * len(policies) * args.repeats
    print(f"# batching_table: {results['cpu']}, {os.cpu_count()} CPUs; "
          f"{runs_per_model} runs per model of {args.warmup_s}+{args.duration_s} s; "
          f"started {stamp}, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    try:
        for entry in [m for m in args.models.split(",") if m]:
            entry, _, slo = entry.partition("@")
            args.slo_us = int(slo) if slo else default_slo_us
            model_dir = model_folder(entry, args, root)
            with open(os.path.join(model_dir, "config.pbtxt")) as f:
                match = re.search(r"max_batch_size\s*:\s*(\d+)", f.read())
            max_batch = int(match.group(1)) if match else 0
            name = os.path.basename(os.path.normpath(model_dir))
            if max_batch <= 0:
                print(f"# {name}: max_batch_size 0, nothing to batch; skipped", file=sys.stderr)
                continue
            concurrency = args.capacity_concurrency or 2 * max_batch * args.instances
            batch1 = measure_capacity(args, model_dir, root, out_dir, "none",
                                      4 * args.instances)
            full = measure_capacity(args, model_dir, root, out_dir, "none", 4 * args.instances,
                                    rows=max_batch)
            served = measure_capacity(args, model_dir, root, out_dir, "fixed8000", concurrency)
            nan = float("nan")
            model = {"batch1_per_s": batch1, "full_batch_per_s": full, "served_per_s": served,
                     "headroom": full / batch1 if batch1 > 0 else nan,
                     "served_headroom": served / batch1 if batch1 > 0 else nan,
                     "slo_us": args.slo_us, "cells": {}}
            results["models"][name] = model
            capacity = max(served, batch1)
            print(f"# {name}: rows/s batch-1 {batch1:.0f}, full-batch {full:.0f}, served "
                  f"{served:.0f}; headroom {model['headroom']:.2f}x, served "
                  f"{model['served_headroom']:.2f}x", file=sys.stderr)
            repositories = {p: make_repository(model_dir, p, args, root)[0] for p in policies}
            for load in loads:
                rate = load / 100.0 * capacity
                cell = {p: [] for p in policies}
                for repeat in range(args.repeats):
                    seed = args.seed * 1000 + repeat
                    order = policies[:]
                    rng.shuffle(order)
                    for policy in order:
                        stem = os.path.join(out_dir, f"{name}-{load:g}-{policy}-r{repeat}")
                        with Server(args.brigade, repositories[policy], stem + ".log") as server:
                            level, stolen, others = run_bench(
                                args, server, name,
                                ["--rate", f"{rate:.3f}", "--arrival", "poisson", "--seed",
                                 str(seed), "--open-loop-workers", str(args.open_loop_workers)],
                                stem + ".json")
                        server_stats = level.get("server") or {}
                        cell[policy].append({
                            "p99_ms": level["latency_us"]["p99"] / 1000.0,
                            "p50_ms": level["latency_us"]["p50"] / 1000.0,
                            "throughput_per_s": level["throughput_per_s"],
                            "failed": level["failed"] + level.get("unsent", 0),
                            "mean_batch": server_stats.get("mean_batch_size", float("nan")),
                            "steal_ms": stolen,
                            "others_cores": others,
                        })
                        print(f"# {name} {load:g}% r{repeat + 1}/{args.repeats} {policy}: p99 "
                              f"{cell[policy][-1]['p99_ms']:.2f} ms, steal {stolen:.0f} ms, "
                              f"other processes {others:.2f} cores", file=sys.stderr)
                model["cells"][f"{load:g}"] = {"rate_per_s": rate, "runs": cell}
    finally:
        shutil.rmtree(root, ignore_errors=True)
        with open(os.path.join(out_dir, "results.json"), "w") as f:
            json.dump(results, f, indent=1)

    print_table(results, policies, constants, args, rng)


def print_table(results, policies, constants, args, rng):
    print(f"# batching_table.py on {results['cpu']}, started {results['started_utc']} UTC")
    print(f"# {' '.join(results['argv'])}")
    print(f"# {args.repeats} repeats of {args.warmup_s}+{args.duration_s} s, Poisson arrivals; "
          f"ratio = median p99 / best constant's ({', '.join(constants)}), 90% paired bootstrap "
          f"interval ({args.bootstrap} samples); throughput as a share of the best constant's")
    print()
    for name, model in results["models"].items():
        print(f"**{name}**: rows/s batch-1 {model['batch1_per_s']:.0f}, full-batch "
              f"{model['full_batch_per_s']:.0f}, served with batching "
              f"{model['served_per_s']:.0f}; batching headroom {model['headroom']:.2f}x "
              f"(served {model['served_headroom']:.2f}x); load 100% = "
              f"{max(model['served_per_s'], model['batch1_per_s']):.0f}/s; SLO of the adaptive "
              f"policies {model['slo_us'] / 1000:g} ms")
        print()
        print("| load | policy | p99 ms | × best constant [90% CI] | throughput/s (× best) "
              "| p50 ms | mean batch | failed | p99 ms of each run | steal ms of each run "
              "| other processes' cores, max of the runs |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for load, cell in model["cells"].items():
            runs = cell["runs"]
            p99s = {p: [r["p99_ms"] for r in runs[p]] for p in policies}
            best = min(constants, key=lambda c: statistics.median(p99s[c]))
            best_thr = statistics.median(r["throughput_per_s"] for r in runs[best])
            for policy in policies:
                ratio = ratio_to_best(p99s, policy, constants, range(args.repeats))
                low, high = bootstrap_interval(p99s, policy, constants, args.repeats,
                                               args.bootstrap, rng)
                thr = statistics.median(r["throughput_per_s"] for r in runs[policy])
                mark = " (best)" if policy == best else ""
                print(f"| {load}% | {policy}{mark} | {statistics.median(p99s[policy]):.2f} | "
                      f"{ratio:.2f} [{low:.2f}, {high:.2f}] | {thr:.0f} ({thr / best_thr:.3f}) | "
                      f"{statistics.median(r['p50_ms'] for r in runs[policy]):.2f} | "
                      f"{statistics.median(r['mean_batch'] for r in runs[policy]):.1f} | "
                      f"{sum(r['failed'] for r in runs[policy])} | "
                      f"{' '.join(f'{v:.2f}' for v in p99s[policy])} | "
                      f"{' '.join('%.0f' % r['steal_ms'] for r in runs[policy])} | "
                      f"{max(r['others_cores'] for r in runs[policy]):.2f} |")
            if "p99" in policies:
                ratio = ratio_to_best(p99s, "p99", constants, range(args.repeats))
                low, high = bootstrap_interval(p99s, "p99", constants, args.repeats,
                                               args.bootstrap, rng)
                verdict = "met" if ratio <= 1.05 and high <= 1.10 else "NOT met"
                print(f"| {load}% | aim: P99 model ≤ 1.05× (upper ≤ 1.10×) | | {verdict} "
                      f"| | | | | | | |")
                fixed = [c for c in constants if c.startswith("fixed")]
                if fixed and model["headroom"] >= 1.5 and float(load) == 80:
                    ratio = ratio_to_best(p99s, "p99", fixed, range(args.repeats))
                    verdict = "met" if ratio <= 0.7 else "NOT met"
                    print(f"| {load}% | aim (headroom ≥ 1.5): P99 model ≤ 0.7× the best fixed "
                          f"delay | | {ratio:.2f}×: {verdict} | | | | | | | |")
        print()


if __name__ == "__main__":
    main()
