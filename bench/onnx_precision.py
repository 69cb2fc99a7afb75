#!/usr/bin/python3
"""Brigade's engine in fp32 and in bf16 (CompiledModel's ComputePrecision::kBf16) beside ONNX
Runtime fp32, on the same files, in one table.

For each model: an accuracy check first (ONNX Runtime's fp32 outputs on random inputs at batch
ACC_BATCH, dumped by ort-run.js, against Brigade's fp32 and bf16 outputs on the same inputs:
max |err| over max |ORT| and, for [N, C] outputs, top-1 agreement), then for every threads ×
batch configuration REPS repetitions of ORT, Brigade fp32, Brigade bf16 one after another, so
all three see the same machine load. A cell is the median over repetitions of each run's median
(ms); the ratios are per repetition, the range printed.

    bench/onnx_precision.py [MODEL ...]      (default: resnet50 mobilenet_v2 distilbert)

Environment: BUILD (default build), ORT_RUN (default /work/shared/yardstick/ort-run.js),
NODE_PATH (default /tmp/ort/node_modules), BATCHES (default "1 8"), THREADS_LIST (default
"1 2"), RUNS (default 10; batch > 1: 4), REPS (default 3), ACC_BATCH (default 8).
Models are bench/models/NAME.onnx (bench/models/make_models.py). bf16 runs bf16 only where the
CPU multiplies it natively; the script prints what onnx_run reports it ran. Results are printed,
not asserted.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def env_list(name, default):
    return [int(x) for x in os.environ.get(name, default).split()]


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no JSON line in: {text[-500:]}")


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode not in (0, 3):  # 3: onnx_run --compare outside the fp32 tolerance
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()[-500:]}")
    return last_json(done.stdout)


def main():
    build = os.environ.get("BUILD", os.path.join(ROOT, "build"))
    onnx_run = os.path.join(build, "bench", "onnx_run")
    ort_run = os.environ.get("ORT_RUN", "/work/shared/yardstick/ort-run.js")
    os.environ.setdefault("NODE_PATH", "/tmp/ort/node_modules")
    batches, threads_list = env_list("BATCHES", "1 8"), env_list("THREADS_LIST", "1 2")
    runs, reps = int(os.environ.get("RUNS", "10")), int(os.environ.get("REPS", "3"))
    acc_batch = int(os.environ.get("ACC_BATCH", "8"))
    names = sys.argv[1:] or ["resnet50", "mobilenet_v2", "distilbert"]
    with open("/proc/loadavg") as f:
        print(f"load average at start: {' '.join(f.read().split()[:3])}", flush=True)
    rows, checks = [], []
    for name in names:
        model = os.path.join(ROOT, "bench", "models", f"{name}.onnx")
        with tempfile.TemporaryDirectory() as dump:
            run(["node", ort_run, model, "--threads", "1", "--runs", "1", "--warmup", "0",
                 "--dim", f"batch={acc_batch}", "--dump", dump])
            for precision in ("fp32", "bf16"):
                out = run([onnx_run, "--model", model, "--threads", "1", "--compare", dump,
                           "--precision", precision])
                first = out["outputs"][0]
                scaled = first["max_abs_err"] / max(first["max_abs_expected"], 1e-30)
                agree = (f"{first['top1_agree']}/{first['rows']}" if first["rows"] else "–")
                checks.append((name, out["precision"], scaled, first["max_abs_err"], agree))
        for threads in threads_list:
            for batch in batches:
                n = runs if batch == 1 else max(2, runs // 2 - 1)
                cells = {"ort": [], "fp32": [], "bf16": []}
                ran = "?"
                for _ in range(reps):
                    ort = run(["node", ort_run, model, "--threads", str(threads), "--dim",
                               f"batch={batch}", "--runs", str(n), "--warmup", "2"])
                    cells["ort"].append(ort["median_ms"])
                    for precision in ("fp32", "bf16"):
                        ours = run([onnx_run, "--model", model, "--threads", str(threads),
                                    "--batch", str(batch), "--runs", str(n), "--warmup", "2",
                                    "--precision", precision])
                        cells[precision].append(ours["median_ms"])
                        if precision == "bf16":
                            ran = ours["precision"]
                rows.append((name, batch, threads, cells, ran))
                print(f"{name} b{batch} t{threads}: " +
                      " ".join(f"{k} {statistics.median(v):.2f}" for k, v in cells.items()),
                      file=sys.stderr, flush=True)
    with open("/proc/loadavg") as f:
        print(f"load average at end: {' '.join(f.read().split()[:3])}")
    print("\n| model | batch | threads | ORT fp32 ms | Brigade fp32 ms | Brigade bf16 ms "
          "| bf16 / fp32 | bf16 / ORT | fp32 / ORT |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, batch, threads, cells, ran in rows:
        def span(a, b):
            ratios = [x / y for x, y in zip(cells[a], cells[b])]
            return f"{min(ratios):.2f}–{max(ratios):.2f}"
        med = {k: statistics.median(v) for k, v in cells.items()}
        label = "" if ran == "bf16" else f" (ran {ran})"
        print(f"| {name} | {batch} | {threads} | {med['ort']:.2f} | {med['fp32']:.2f} | "
              f"{med['bf16']:.2f}{label} | {span('bf16', 'fp32')} | {span('bf16', 'ort')} | "
              f"{span('fp32', 'ort')} |")
    print(f"\nAccuracy against ONNX Runtime fp32 (batch {acc_batch}, random inputs):\n")
    print("| model | Brigade precision | max abs err / max abs ORT | max abs err | top-1 agreement |")
    print("|---|---|---:|---:|---:|")
    for name, precision, scaled, err, agree in checks:
        print(f"| {name} | {precision} | {scaled:.2e} | {err:.3g} | {agree} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
