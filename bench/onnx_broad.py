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
BUDGET_S (default 15: seconds of timed runs per engine and configuration; a model slower than
that gets fewer runs, down to one, estimated from its output check; the table's runs column
says how many; one estimated above MAX_RUN_S, default 100, is skipped with a row saying
so), GOMP_SPINCOUNT (default 10000, see bench/onnx_bench.sh), MARKDOWN=1 for a
Markdown table, ROWS=FILE to append every row as a JSON line when it is measured. Interrupted
(Ctrl-C, SIGTERM), it prints the rows it has. Needs ONNX Runtime for Node (see
bench/onnx_compare.sh), onnx_run built, numpy. Results are printed, not asserted.
"""

import json
import os
import re
import shutil
import signal
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
        self.budget_s = float(os.environ.get("BUDGET_S", "15"))
        self.max_run_s = float(os.environ.get("MAX_RUN_S", "100"))
        # Seconds per image of each engine's output-check run (batch 2, 1 thread, model load
        # included): the estimate that sizes a slow model's runs to the budget.
        self.per_image_s = {}

    def check(self, model):
        """Brigade's outputs against ORT's at batch 2, 1 thread: (error or None, summary)."""
        dump = tempfile.mkdtemp(prefix="onnx_broad.")
        try:
            start = time.monotonic()
            rc, _, err = run(["node", self.ort_run, model, "--threads", "1", "--runs", "1",
                              "--warmup", "0", "--dim", "batch=2", "--dump", dump])
            self.per_image_s[("ort", model)] = (time.monotonic() - start) / 2
            if rc != 0:
                return None, f"ORT failed: {failure(rc, err)}"
            ours = os.path.join(dump, "ours")
            os.makedirs(ours)
            start = time.monotonic()
            rc, _, err = run([self.onnx_run, "--model", model, "--threads", "1", "--compare",
                              dump, "--dump-outputs", ours])
            self.per_image_s[("brigade", model)] = (time.monotonic() - start) / 2
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

    def plan_runs(self, engine, model, batch, threads):
        """(runs, warmup) that fit the budget, from the output check's time per image."""
        runs = self.runs if batch == 1 else self.batched_runs
        warmup = self.warmup if batch == 1 else max(1, self.warmup - 1)
        estimate_s = self.per_image_s.get((engine, model), 0) * batch / threads
        if estimate_s * (runs + warmup) > self.budget_s:
            runs = max(1, min(runs, int(self.budget_s / max(estimate_s, 1e-3))))
            warmup = 1 if runs >= 3 else 0  # onnx_run's untimed first run still plans
        return runs, warmup

    def time(self, model, batch, threads):
        """Times both engines; returns (Brigade ms, ORT ms, top-3 ops, runs text)."""
        ort_runs, ort_warmup = self.plan_runs("ort", model, batch, threads)
        rc, out, err = run(["node", self.ort_run, model, "--threads", str(threads), "--dim",
                            f"batch={batch}", "--runs", str(ort_runs), "--warmup",
                            str(ort_warmup)])
        ort = last_json(out)["median_ms"] if rc == 0 else f"ORT failed: {failure(rc, err)}"
        estimate_s = self.per_image_s.get(("brigade", model), 0) * batch / threads
        if estimate_s > self.max_run_s:
            return (f"skipped: ~{estimate_s:.0f} s per run (output check's time per image × "
                    f"batch / threads > MAX_RUN_S)", ort, "", f"0/{ort_runs}")
        runs, warmup = self.plan_runs("brigade", model, batch, threads)
        # Too slow for a separate profile run: profile the timed runs (the per-step clock
        # costs far less than such a model's steps).
        together = runs <= 3 and self.profile_runs > 0
        command = [self.onnx_run, "--model", model, "--threads", str(threads), "--batch",
                   str(batch), "--runs", str(runs), "--warmup", str(warmup)]
        rc, out, err = run(command + (["--profile"] if together else []))
        if rc != 0:
            return f"failed: {failure(rc, err)}", ort, "", f"{runs}/{ort_runs}"
        ours = last_json(out)["median_ms"]
        if together:
            top = top_ops(err)
        else:
            top = self.profile(model, batch, threads, min(self.profile_runs, runs))
        return ours, ort, top, f"{runs}/{ort_runs}"

    def profile(self, model, batch, threads, runs):
        if runs <= 0:
            return ""
        rc, _, err = run([self.onnx_run, "--model", model, "--threads", str(threads), "--batch",
                          str(batch), "--runs", str(runs), "--warmup", "1", "--profile"])
        if rc != 0:
            return f"(profile failed: {failure(rc, err)})"
        return top_ops(err)


def top_ops(profile_text):
    """The first three rows of onnx_run --profile's table: "Op share%"."""
    rows = []
    for line in profile_text.splitlines():
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
    rows_file = os.environ.get("ROWS")

    def finish(*_):
        print_table(bench, names, checks, rows, start, load_start)
        sys.exit(0)

    signal.signal(signal.SIGTERM, finish)
    try:
        for name in names:
            model = os.path.join(ROOT, "bench", "models", f"{name}.onnx")
            if not os.path.exists(model):
                checks[name] = (f"missing: make_models.py --only {name}", "")
                continue
            log(f"{name}: output check")
            checks[name] = bench.check(model)
            log(f"  {checks[name][0] or checks[name][1]}")
        for threads in bench.threads:
            for name in names:
                if checks[name][0] is not None:
                    continue
                model = os.path.join(ROOT, "bench", "models", f"{name}.onnx")
                for batch in bench.batches:
                    log(f"{name}: batch {batch}, {threads} thread(s)")
                    rows[(name, batch, threads)] = bench.time(model, batch, threads)
                    log(f"  {rows[(name, batch, threads)]}")
                    if rows_file:
                        with open(rows_file, "a") as f:
                            ours, ort, top, runs = rows[(name, batch, threads)]
                            f.write(json.dumps({
                                "model": name, "batch": batch, "threads": threads,
                                "brigade_ms": ours, "ort_ms": ort, "top3": top, "runs": runs,
                                "check": checks[name][1], "time": time.time(),
                                "loadavg": open("/proc/loadavg").read().split()[:3]}) + "\n")
    except KeyboardInterrupt:
        log("interrupted: the rows measured so far")
    print_table(bench, names, checks, rows, start, load_start)
    return 0


def print_table(bench, names, checks, rows, start, load_start):
    load_end = open("/proc/loadavg").read().split()[:3]
    header = ["model", "batch", "threads", "Brigade ms", "ORT ms", "ratio",
              "Brigade's top-3 ops (share of its time)", "runs B/O", "vs ORT (batch 2, 1 thread)"]
    table = []
    for name in names:
        if name not in checks:
            table.append([name, "-", "-", "-", "-", "-", "", "", "not measured (interrupted)"])
            continue
        error, summary = checks[name]
        if error is not None:
            table.append([name, "-", "-", "-", "-", "-", "", "", f"FAILS: {error}"])
            continue
        for batch in bench.batches:
            for threads in bench.threads:
                if (name, batch, threads) not in rows:
                    continue
                ours, ort, top, runs = rows[(name, batch, threads)]
                table.append([name, str(batch), str(threads), cell(ours), cell(ort),
                              ratio(ours, ort), top, runs, summary])
    print(f"# {start}; load average at start {' '.join(load_start)}, at end "
          f"{' '.join(load_end)}; GOMP_SPINCOUNT={os.environ['GOMP_SPINCOUNT']}; medians of "
          f"up to {bench.runs} runs (batch 1) / {bench.batched_runs} (batched), "
          f"{bench.budget_s:g} s budget per engine and configuration")
    if os.environ.get("MARKDOWN") == "1":
        numeric = ("batch", "threads", "Brigade ms", "ORT ms", "ratio", "runs B/O")
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---:" if h in numeric else "---" for h in header) + "|")
        for r in table:
            print("| " + " | ".join(c.replace("|", "/") for c in r) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
        for r in [header] + table:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
