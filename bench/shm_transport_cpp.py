#!/usr/bin/python3
"""Shared memory vs HTTP binary vs gRPC with Brigade's C++ load generator (`brigade bench`), for
a ResNet-50-sized input (FP32 [1, 3, 224, 224], 602,112 bytes), at 1 and 16 connections.

    /usr/bin/python3 bench/shm_transport_cpp.py [--repeats 3] [--duration-s 4]   # BRIGADE_BIN

The model and server are bench/shm_transport.py's (GlobalAveragePool + Flatten on Brigade's ONNX
engine; `--http-max-input-size` 64 MiB), one copy per transport, concurrency and repeat, so the
statistics extension's stage summary gives each run's own compute p50. Transports:
  http-binary      Triton's binary extension: the tensor follows a JSON header in the body
  http-binary+shm  the tensor written once into each connection's registered region
                   (`--shared-memory system`); a ~300 B JSON request; outputs binary
  grpc             ModelInfer, the tensor in raw_input_contents
  grpc+shm         the same with `--shared-memory system`
Runs are interleaved: repeat r runs every transport and concurrency before repeat r + 1.

Printed per run: client p50/p99 (brigade bench, closed loop), the server's compute p50, overhead
p50 = client p50 - compute p50, the server's CPU per request (utime + stime from /proc/PID/stat
over the bench process's life, divided by the requests the model answered then: warm-up
included), and the client's CPU per request (brigade bench's own figure, measured window).
Prints, asserts nothing; raw rows go to --out as JSON.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
import shm_transport  # noqa: E402
from brigade_process import BRIGADE_BIN, BrigadeProcess  # noqa: E402

TRANSPORTS = {
    "http-binary": ["-i", "http", "--http-binary"],
    "http-binary+shm": ["-i", "http", "--http-binary", "--shared-memory", "system"],
    "grpc": ["-i", "grpc"],
    "grpc+shm": ["-i", "grpc", "--shared-memory", "system"],
}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def model_name(transport, concurrency, repeat):
    return f"pool_{transport.replace('-', '_').replace('+', '_')}_c{concurrency}_r{repeat}"


def make_repository(root, concurrencies, repeats):
    model_file = os.path.join(root, "pool.onnx")
    shm_transport.write_model(model_file)
    for transport in TRANSPORTS:
        for c in concurrencies:
            for r in range(repeats):
                name = model_name(transport, c, r)
                os.makedirs(os.path.join(root, name, "1"))
                shutil.copy(model_file, os.path.join(root, name, "1", "model.onnx"))
                with open(os.path.join(root, name, "config.pbtxt"), "w") as f:
                    f.write(shm_transport.CONFIG.format(name=name))
    os.unlink(model_file)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def model_stats(server, model):
    with urllib.request.urlopen(f"{server.http_url}/v2/models/{model}/stats", timeout=10) as r:
        stats = json.loads(r.read())["model_stats"][0]
    stages = {s["stage"]: s["p50_us"] for s in stats.get("brigade_stage_latency", [])}
    return stats["inference_stats"]["success"]["count"], stages


def run(server, transport, concurrency, repeat, args):
    model = model_name(transport, concurrency, repeat)
    port = server.grpc_port if "grpc" in transport else server.http_port
    ticks0 = cpu_ticks(server.proc.pid)
    count0, _ = model_stats(server, model)
    out = subprocess.run(
        [BRIGADE_BIN, "bench", "-m", model, "-u", f"127.0.0.1:{port}", *TRANSPORTS[transport],
         "--concurrency", str(concurrency), "--warmup-s", str(args.warmup_s),
         "--duration-s", str(args.duration_s), "-f", "json", "--no-progress"],
        capture_output=True, text=True, timeout=120)
    ticks1 = cpu_ticks(server.proc.pid)
    if out.returncode != 0:
        raise RuntimeError(f"{transport} c={concurrency}: brigade bench failed: {out.stderr}")
    level = json.loads(out.stdout)["levels"][0]
    if level["failed"] != 0:
        raise RuntimeError(f"{transport} c={concurrency}: {level['failed']} requests failed: "
                           f"{level['errors']}")
    count1, stages = model_stats(server, model)
    compute = stages.get("compute")
    p50 = level["latency_us"]["p50"]
    return {
        "transport": transport, "concurrency": concurrency, "repeat": repeat,
        "requests": level["ok"], "throughput_rps": level["throughput_per_s"],
        "p50_us": p50, "p99_us": level["latency_us"]["p99"],
        "server_compute_p50_us": compute,
        "overhead_p50_us": p50 - compute if compute is not None else None,
        "server_stage_p50_us": stages,
        "server_cpu_us_per_request": (ticks1 - ticks0) / CLK_TCK * 1e6 / max(1, count1 - count0),
        "client_cpu_us_per_request": level["client_cpu_us_per_request"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup-s", type=float, default=1.0)
    parser.add_argument("--duration-s", type=float, default=4.0)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "shm_transport_cpp.json"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="brigade-shm-cpp-bench-")
    try:
        make_repository(work, args.concurrency, args.repeats)
        rows = []
        with BrigadeProcess(model_repository=work,
                            extra_args=["--http-max-input-size", str(1 << 26)]) as server:
            for repeat in range(args.repeats):
                for concurrency in args.concurrency:
                    for transport in TRANSPORTS:
                        r = run(server, transport, concurrency, repeat, args)
                        rows.append(r)
                        print(f"r{repeat} {transport:16s} c={concurrency:<3d} p50 "
                              f"{r['p50_us']:8.1f} us  p99 {r['p99_us']:8.1f} us  compute p50 "
                              f"{r['server_compute_p50_us'] or 0:6.1f} us  overhead p50 "
                              f"{r['overhead_p50_us'] or 0:8.1f} us  server CPU "
                              f"{r['server_cpu_us_per_request']:6.1f} us/req  client CPU "
                              f"{r['client_cpu_us_per_request']:6.1f} us/req  "
                              f"{r['throughput_rps']:7.0f} req/s  load "
                              f"{os.getloadavg()[0]:.2f}", flush=True)
        result = {"cpu": shm_transport.cpu_model(), "cores": os.cpu_count(),
                  "input_bytes": shm_transport.BYTES, "duration_s": args.duration_s,
                  "rows": rows}
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
        print(f"CPU: {result['cpu']} ({result['cores']} logical CPUs); written to {args.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
