#!/usr/bin/env bash
# Serving overhead: what Brigade adds on top of the model's own compute time.
#
# Starts `brigade serve` on a repository holding the trivial model (models/identity: 16 floats
# in, the same out, builtin backend) and the Fashion-MNIST classifier (models/fashion_mnist,
# TorchScript), then runs `brigade bench` for each model x {HTTP JSON, HTTP binary, gRPC} x
# concurrency {1, 16} and prints, per row: end-to-end p50/p99 as the client sees it, the
# backend's compute time per request (queue excluded; mean, from the statistics extension:
# compute_input + compute_infer + compute_output), and the serving overhead = end-to-end - compute
# at p50 and p99. The bench's own CPU cost per request is printed too.
#
# Server and client are pinned to different cores with taskset when the machine has at least
# two (server on the first half, client on the second); on the 2-core development VM that is one
# core each, and the VM is noisy: repeat a run before trusting a difference under ~20%.
#
# Usage: bench/serving_overhead.sh [options]
#   --brigade PATH     the binary (default: $BRIGADE_BIN or build/brigade)
#   --duration-s N     measured seconds per row (default 5)
#   --warmup-s N       warm-up seconds per row (default 1)
#   --models "A B"     models to measure (default "identity fashion_mnist")
#   --json DIR         keep each row's `brigade bench --format json` report in DIR
#   --paths "A B"      request paths to compare, each on a fresh server (default "handoff inline":
#                      --run-inline-max-us 0 against run to completion)
#   --inline-us N      the run-to-completion bound of the inline path (default 1000)
# Each row also gives the server's CPU time per request (/proc/PID/stat over the run ÷ requests
# the server answered), the figure that does not depend on the client sharing the machine.
# Prints; asserts nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BRIGADE=${BRIGADE_BIN:-$ROOT/build/brigade}
DURATION_S=5
WARMUP_S=1
MODELS="identity fashion_mnist"
PATHS="handoff inline"
INLINE_US=1000
JSON_DIR=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --brigade) BRIGADE=$2; shift 2 ;;
    --duration-s) DURATION_S=$2; shift 2 ;;
    --warmup-s) WARMUP_S=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --json) JSON_DIR=$2; shift 2 ;;
    --paths) PATHS=$2; shift 2 ;;
    --inline-us) INLINE_US=$2; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BRIGADE" ]] || { echo "no brigade binary at $BRIGADE (build it, or pass --brigade)" >&2; exit 1; }

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A repository with only the measured models, copied from models/ (a model directory that is a
# symbolic link out of the repository is refused without --allow-symlinked-models).
mkdir -p "$WORK/repo"
for model in $MODELS; do
  [[ -d "$ROOT/models/$model" ]] || { echo "models/$model is missing" >&2; exit 1; }
  cp -r "$ROOT/models/$model" "$WORK/repo/$model"
done

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
HTTP_PORT=$(free_port)
GRPC_PORT=$(free_port)

# Core placement: server on the first half of the allowed CPUs, client on the rest.
CPUS=($(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))'))
SERVER_PIN=()
CLIENT_PIN=()
PLACEMENT="unpinned (one CPU)"
if [[ ${#CPUS[@]} -ge 2 ]] && command -v taskset >/dev/null; then
  half=$(( ${#CPUS[@]} / 2 ))
  server_cpus=$(IFS=,; echo "${CPUS[*]:0:$half}")
  client_cpus=$(IFS=,; echo "${CPUS[*]:$half}")
  SERVER_PIN=(taskset -c "$server_cpus")
  CLIENT_PIN=(taskset -c "$client_cpus")
  PLACEMENT="server on CPU $server_cpus, client on CPU $client_cpus"
fi

# Server CPU per request: utime + stime of the server process (/proc/PID/stat, clock ticks)
# over a bench run, divided by the requests the server answered meanwhile (its statistics
# extension's success count, warm-up included on both sides). Unlike wall-clock latency it does
# not depend on what the client costs or on the other core.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
successes() {
  python3 -c 'import json, sys, urllib.request
doc = json.load(urllib.request.urlopen(sys.argv[1], timeout=5))
print(sum(m["inference_stats"]["success"]["count"] for m in doc["model_stats"]))' \
    "http://127.0.0.1:$HTTP_PORT/v2/models/$1/stats"
}

start_server() {  # $1: --run-inline-max-us value
  "${SERVER_PIN[@]}" "$BRIGADE" serve --model-repository "$WORK/repo" \
    --http-address 127.0.0.1 --http-port "$HTTP_PORT" \
    --grpc-address 127.0.0.1 --grpc-port "$GRPC_PORT" --log-level warn \
    --run-inline-max-us "$1" >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 300); do
    if ready; then return 0; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "brigade serve exited:" >&2; cat "$WORK/server.log" >&2; exit 1
    fi
    sleep 0.1
  done
  echo "server not ready after 30 s:" >&2; cat "$WORK/server.log" >&2; exit 1
}
stop_server() {
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

ready() {
  python3 -c 'import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=1).status == 200 else 1)
except Exception:
    sys.exit(1)' "http://127.0.0.1:$HTTP_PORT/v2/health/ready"
}

TICK_HZ=$(getconf CLK_TCK)
echo "# brigade serving overhead — $(nproc) CPUs, $PLACEMENT; ${WARMUP_S}s warm-up + ${DURATION_S}s per row"
echo "# $(lscpu | sed -n 's/^Model name: *//p'); $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# paths: handoff = --run-inline-max-us 0 (every batch on an instance thread), inline ="
echo "#   --run-inline-max-us $INLINE_US (run to completion on the receiving thread)"
for path in $PATHS; do
  case "$path" in
    handoff) start_server 0 ;;
    inline) start_server "$INLINE_US" ;;
    *) echo "unknown path $path (handoff, inline)" >&2; exit 2 ;;
  esac
  for model in $MODELS; do
    for wire in http-json http-binary grpc; do
      case "$wire" in
        http-json) args=(-i http -u "127.0.0.1:$HTTP_PORT") ;;
        http-binary) args=(-i http -u "127.0.0.1:$HTTP_PORT" --http-binary) ;;
        grpc) args=(-i grpc -u "127.0.0.1:$GRPC_PORT") ;;
      esac
      for c in 1 16; do
        ticks0=$(cpu_ticks "$SERVER_PID"); served0=$(successes "$model")
        "${CLIENT_PIN[@]}" "$BRIGADE" bench -m "$model" "${args[@]}" --concurrency "$c" \
          --warmup-s "$WARMUP_S" --duration-s "$DURATION_S" --format json --no-progress \
          -o "$WORK/$path.$model.$wire.$c.json"
        ticks1=$(cpu_ticks "$SERVER_PID"); served1=$(successes "$model")
        echo "$(( ticks1 - ticks0 )) $(( served1 - served0 ))" >"$WORK/$path.$model.$wire.$c.cpu"
      done
    done
  done
  stop_server
done

python3 - "$WORK" "$TICK_HZ" "$PATHS" $MODELS <<'PY'
import json, sys
work, hz, paths, models = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
def cell(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"
header = ("model", "protocol", "c", "path", "req/s", "p50 µs", "p99 µs", "compute µs",
          "overhead p50", "overhead p99", "server CPU µs/req", "client µs/req")
rows = []
for model in models:
    for wire in ("http-json", "http-binary", "grpc"):
        for c in ("1", "16"):
            for path in paths:
                stem = f"{work}/{path}.{model}.{wire}.{c}"
                level = json.load(open(stem + ".json"))["levels"][0]
                ticks, served = map(int, open(stem + ".cpu").read().split())
                server = level["server"]
                compute = server["compute_us"] if server and server["requests"] else None
                errors = sum(e["count"] for e in level["errors"].values())
                cpu = ticks * 1e6 / hz / served if served else None
                rows.append((model, wire, c, path, cell(level["throughput_per_s"], 0),
                             cell(level["latency_us"]["p50"]), cell(level["latency_us"]["p99"]),
                             cell(compute), cell(level["overhead_us"]["p50"]),
                             cell(level["overhead_us"]["p99"]), cell(cpu),
                             cell(level["client_cpu_us_per_request"])
                             + (f"  ({errors} errors)" if errors else "")))
widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
for row in [header] + rows:
    print("  ".join(c.rjust(w) if i >= 4 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
PY

if [[ -n "$JSON_DIR" ]]; then
  mkdir -p "$JSON_DIR"
  cp "$WORK"/*.json "$JSON_DIR"/
fi
