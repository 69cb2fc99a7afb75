#!/usr/bin/python3
"""Times Brigade's ONNX engine against ONNX Runtime on the broad benchmark set, in one table.

For each model (bench/models/make_models.py --only broad writes them): first an output check
(ONNX Runtime's inputs and outputs at batch 2, 1 thread, dumped by ort-run.js; Brigade's
outputs on the same inputs), then for every threads × batch configuration ONNX Runtime and
Brigade alternately (so both see the same machine load), then a short `onnx_run --profile` run
of the same configuration for Brigade's top three op types by time. Prints one table:

    model | batch | threads | Brigade ms | ORT ms | ratio | Brigade's top-3 ops | vs ORT

ratio = Brigade median / ORT median (< 1: Brigade faster). "vs ORT" is the output check: max
absolute error, max relative error (|err| / max(|ORT|, 1e-6)) and the max error relative to the
output's scale (max |err| / max |ORT|); a model whose scaled error exceeds 1e-3 is marked WRONG
(float32 engines that sum in different orders differ by ~1e-6 of the scale). A model Brigade
cannot load or run gets one row with the error instead of timings; it is never left out.

    bench/onnx_broad.py [MODEL ...]             (default: make_models.py's broad set)
    bench/onnx_bench.sh --broad [MODEL ...]     (the same, through the benchmark script)

Environment (as bench/onnx_bench.sh): BUILD (default build), ORT_RUN (default
/work/shared/yardstick/ort-run.js), NODE_PATH (default /tmp/ort/node_modules), BATCHES (default
"1 8"), THREADS_LIST (default "1 2"), RUNS (default 20; batches above 1 get BATCHED_RUNS,
default 8), WARMUP (default 3), PROFILE_RUNS (default 5; 0 skips the profile),
GOMP_SPINCOUNT (default 10000, see bench/onnx_bench.sh), MARKDOWN=1 for a Markdown table.
Needs ONNX Runtime for Node (see bench/onnx_compare.sh), onnx_run built, numpy. Results are
printed, not asserted.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))

NUMPY_TYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64,
               "int32": np.int32, "uint8": np.uint8, "int8": np.int8, "bool": np.bool_}
WRONG_SCALED_ERROR = 1e-3
TIMEOUT_S = 900


def env_list(name, default):
    return [int(x) for x in os.environ.get(name, default).split()]


def log(message):
    print(message, file=sys.stderr, flush=True)


def run(command, timeout=TIMEOUT_S):
    """Runs command; returns (returncode, stdout, stderr); a timeout reads as returncode None."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s"
    return done.returncode, done.stdout, done.stderr


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return None


def failure(returncode, stderr):
    """One line saying why a command failed: its last error line, or the signal."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    message = lines[-1] if lines else ""
    if returncode is None:
        return message
    if returncode < 0:
        return f"crashed (signal {-returncode}) {message}".strip()
    return message or f"exit status {returncode}"


class Bench:
    def __init__(self):
        self.build = os.environ.get("BUILD", "build")
        self.onnx_run = os.path.join(self.build, "bench", "onnx_run")
        self.ort_run = os.environ.get("ORT_RUN", "/work/shared/yardstick/ort-run.js")
        os.environ.setdefault("NODE_PATH", "/tmp/ort/node_modules")
        os.environ.setdefault("GOMP_SPINCOUNT", "10000")
        self.batches = env_list("BATCHES", "1 8")
        self.threads = env_list("THREADS_LIST", "1 2")
        self.runs = int(os.environ.get("RUNS", "20"))
        self.batched_runs = int(os.environ.get("BATCHED_RUNS", "8"))
        self.warmup = int(os.environ.get("WARMUP", "3"))
        self.profile_runs = int(os.environ.get("PROFILE_RUNS", "5"))

    def check(self, model):
        """Brigade's outputs against ORT's at batch 2, 1 thread: (error or None, summary)."""
        dump = tempfile.mkdtemp(prefix="onnx_broad.")
        try:
            rc, _, err = run(["node", self.ort_run, model, "--threads", "1", "--runs", "1",
                              "--warmup", "0", "--dim", "batch=2", "--dump", dump])
            if rc != 0:
                return None, f"ORT failed: {failure(rc, err)}"
            ours = os.path.join(dump, "ours")
            os.makedirs(ours)
            rc, _, err = run([self.onnx_run, "--model", model, "--threads", "1", "--compare",
                              dump, "--dump-outputs", ours])
            if rc not in (0, 3):  # 3: ran, outside onnx_run's strict 1e-5 + 1e-4 rel tolerance
                return failure(rc, err), ""
            with open(os.path.join(dump, "manifest.json")) as f:
                manifest = json.load(f)
            worst = None
            for output in manifest["outputs"]:
                dtype = NUMPY_TYPES[output["type"]]
                want = np.fromfile(os.path.join(dump, output["file"]), dtype=dtype)
                path = os.path.join(ours, f"output_{output['name']}.bin")
                if not os.path.exists(path):
                    return f"output {output['name']} not written", ""
                got = np.fromfile(path, dtype=dtype)
                if got.size != want.size:
                    return f"output {output['name']}: {got.size} elements, ORT {want.size}", ""
                want64, got64 = want.astype(np.float64), got.astype(np.float64)
                diff = np.abs(got64 - want64)
                max_abs = float(diff.max()) if diff.size else 0.0
                max_rel = float((diff / np.maximum(np.abs(want64), 1e-6)).max()) if diff.size \
                    else 0.0
                scale = float(np.abs(want64).max()) if diff.size else 0.0
                scaled = max_abs / scale if scale > 0 else max_abs
                if not np.all(np.isfinite(got64)):
                    scaled = float("inf")
                if worst is None or scaled > worst[2]:
                    worst = (max_abs, max_rel, scaled)
            max_abs, max_rel, scaled = worst
            summary = f"abs {max_abs:.1e} rel {max_rel:.1e} scaled {scaled:.1e}"
            if scaled > WRONG_SCALED_ERROR:
                return None, f"WRONG: {summary}"
            return None, summary
        finally:
            shutil.rmtree(dump, ignore_errors=True)

    def time(self, model, batch, threads):
        runs = self.runs if batch == 1 else self.batched_runs
        warmup = self.warmup if batch == 1 else max(1, self.warmup - 1)
        rc, out, err = run(["node", self.ort_run, model, "--threads", str(threads), "--dim",
                            f"batch={batch}", "--runs", str(runs), "--warmup", str(warmup)])
        ort = last_json(out)["median_ms"] if rc == 0 else f"ORT failed: {failure(rc, err)}"
        rc, out, err = run([self.onnx_run, "--model", model, "--threads", str(threads),
                            "--batch", str(batch), "--runs", str(runs), "--warmup",
                            str(warmup)])
        ours = last_json(out)["median_ms"] if rc == 0 else f"failed: {failure(rc, err)}"
        return ours, ort

    def profile(self, model, batch, threads):
        if self.profile_runs <= 0:
            return ""
        rc, _, err = run([self.onnx_run, "--model", model, "--threads", str(threads), "--batch",
                          str(batch), "--runs", str(self.profile_runs), "--warmup", "1",
                          "--profile"])
        if rc != 0:
            return f"(profile failed: {failure(rc, err)})"
        rows = []
        for line in err.splitlines():
            m = re.match(r"(\S+)\s+\d+\s+[\d.]+\s+([\d.]+)%$", line.strip())
            if m:
                rows.append(f"{m.group(1)} {float(m.group(2)):.0f}%")
        return ", ".join(rows[:3])


def ratio(ours, ort):
    if isinstance(ours, float) and isinstance(ort, float) and ort > 0:
        return f"{ours / ort:.2f}"
    return "-"


def cell(value):
    return f"{value:.3f}" if isinstance(value, float) and value < 10 else \
        f"{value:.1f}" if isinstance(value, float) else str(value)


def main():
    import make_models  # the generator's names: the broad set by default
    names = sys.argv[1:] or list(make_models.BROAD)
    bench = Bench()
    if not os.path.exists(bench.onnx_run):
        log(f"onnx_broad: {bench.onnx_run} missing (ninja -C {bench.build} bench/onnx_run)")
        return 2
    start = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    load_start = open("/proc/loadavg").read().split()[:3]
    checks, rows = {}, {}
    for name in names:
        model = os.path.join(ROOT, "bench", "models", f"{name}.onnx")
        if not os.path.exists(model):
            checks[name] = (f"missing: make_models.py --only {name}", "")
            continue
        log(f"{name}: output check")
        checks[name] = bench.check(model)
    for threads in bench.threads:
        for name in names:
            error, _ = checks[name]
            if error is not None:
                continue
            model = os.path.join(ROOT, "bench", "models", f"{name}.onnx")
            for batch in bench.batches:
                log(f"{name}: batch {batch}, {threads} thread(s)")
                ours, ort = bench.time(model, batch, threads)
                top = bench.profile(model, batch, threads) if isinstance(ours, float) else ""
                rows[(name, batch, threads)] = (ours, ort, top)
    load_end = open("/proc/loadavg").read().split()[:3]

    header = ["model", "batch", "threads", "Brigade ms", "ORT ms", "ratio",
              "Brigade's top-3 ops (share of its time)", "vs ORT (batch 2, 1 thread)"]
    table = []
    for name in names:
        error, summary = checks[name]
        if error is not None:
            table.append([name, "-", "-", "-", "-", "-", "", f"FAILS: {error}"])
            continue
        for batch in bench.batches:
            for threads in bench.threads:
                ours, ort, top = rows[(name, batch, threads)]
                table.append([name, str(batch), str(threads), cell(ours), cell(ort),
                              ratio(ours, ort), top, summary])
    print(f"# {start}; load average at start {' '.join(load_start)}, at end "
          f"{' '.join(load_end)}; GOMP_SPINCOUNT={os.environ['GOMP_SPINCOUNT']}; "
          f"runs {bench.runs} (batch 1) / {bench.batched_runs} (batched), median")
    if os.environ.get("MARKDOWN") == "1":
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---:" if h in ("batch", "threads", "Brigade ms", "ORT ms", "ratio")
                             else "---" for h in header) + "|")
        for r in table:
            print("| " + " | ".join(c.replace("|", "/") for c in r) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
        for r in [header] + table:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
