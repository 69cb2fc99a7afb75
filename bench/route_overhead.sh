#!/usr/bin/env bash
# Ensemble overhead: what running three steps inside the server costs against the client
# chaining the same three calls itself.
#
# Repository: three copies of the trivial model (builtin identity, 16 floats, no compute to
# speak of: s1, s2, s3) and an ensemble `chain3` = s1 -> s2 -> s3. For each concurrency
# (1 and 16) and protocol, `brigade bench` drives
#   - chain3: one request, three steps inside the server;
#   - s1: one plain request (the client chaining three calls pays this three times, in series).
# Printed per row: req/s, p50/p99 as the client sees them, and the server's CPU per request
# (utime+stime of the server process from /proc/PID/stat over the measured run, divided by the
# requests answered: steadier than wall time on a noisy VM). Then per concurrency:
#   server CPU per step beyond a plain request = (CPU(chain3) - CPU(s1)) / 2
#   chained p50 ~ 3 x p50(s1)  (three round trips in series) against p50(chain3).
#
# Usage: bench/route_overhead.sh [--brigade PATH] [--duration-s N] [--warmup-s N]
# Prints; asserts nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BRIGADE=${BRIGADE_BIN:-$ROOT/build/brigade}
DURATION_S=5
WARMUP_S=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --brigade) BRIGADE=$2; shift 2 ;;
    --duration-s) DURATION_S=$2; shift 2 ;;
    --warmup-s) WARMUP_S=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BRIGADE" ]] || { echo "no brigade binary at $BRIGADE" >&2; exit 1; }

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

for step in s1 s2 s3; do
  mkdir -p "$WORK/repo/$step/1"
  cat >"$WORK/repo/$step/config.pbtxt" <<CONFIG
name: "$step"
backend: "brigade"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
parameters { key: "op" value { string_value: "identity" } }
CONFIG
done
mkdir -p "$WORK/repo/chain3/1"
cat >"$WORK/repo/chain3/config.pbtxt" <<'CONFIG'
name: "chain3"
platform: "ensemble"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
ensemble_scheduling {
  step [
    { model_name: "s1" input_map { key: "INPUT0" value: "INPUT0" }
      output_map { key: "OUTPUT0" value: "a" } },
    { model_name: "s2" input_map { key: "INPUT0" value: "a" }
      output_map { key: "OUTPUT0" value: "b" } },
    { model_name: "s3" input_map { key: "INPUT0" value: "b" }
      output_map { key: "OUTPUT0" value: "OUTPUT0" } }
  ]
}
CONFIG

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
HTTP_PORT=$(free_port)
GRPC_PORT=$(free_port)
CPUS=($(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))'))
SERVER_PIN=()
CLIENT_PIN=()
PLACEMENT="unpinned (one CPU)"
if [[ ${#CPUS[@]} -ge 2 ]] && command -v taskset >/dev/null; then
  half=$(( ${#CPUS[@]} / 2 ))
  SERVER_PIN=(taskset -c "$(IFS=,; echo "${CPUS[*]:0:$half}")")
  CLIENT_PIN=(taskset -c "$(IFS=,; echo "${CPUS[*]:$half}")")
  PLACEMENT="server and client on separate CPUs"
fi

"${SERVER_PIN[@]}" "$BRIGADE" serve --model-repository "$WORK/repo" \
  --http-address 127.0.0.1 --http-port "$HTTP_PORT" \
  --grpc-address 127.0.0.1 --grpc-port "$GRPC_PORT" --log-level warn \
  >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
  if curl -sf "http://127.0.0.1:$HTTP_PORT/v2/models/chain3/ready" >/dev/null; then break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.1
done
curl -sf "http://127.0.0.1:$HTTP_PORT/v2/models/chain3/ready" >/dev/null ||
  { echo "chain3 not ready:" >&2; cat "$WORK/server.log" >&2; exit 1; }

# utime + stime of the server, in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

echo "# brigade ensemble overhead — $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
     "$PLACEMENT; ${DURATION_S}s per row"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
for wire in http-binary grpc; do
  case "$wire" in
    http-binary) args=(-i http -u "127.0.0.1:$HTTP_PORT" --http-binary) ;;
    grpc) args=(-i grpc -u "127.0.0.1:$GRPC_PORT") ;;
  esac
  for c in 1 16; do
    for model in chain3 s1; do
      # Warm-up outside the CPU window, then the measured run alone.
      "${CLIENT_PIN[@]}" "$BRIGADE" bench -m "$model" "${args[@]}" --concurrency "$c" \
        --warmup-s 0 --duration-s "$WARMUP_S" --format json --no-progress -o /dev/null
      before=$(server_ticks)
      "${CLIENT_PIN[@]}" "$BRIGADE" bench -m "$model" "${args[@]}" --concurrency "$c" \
        --warmup-s 0 --duration-s "$DURATION_S" --format json --no-progress \
        -o "$WORK/$model.$wire.$c.json"
      after=$(server_ticks)
      echo "$((after - before))" >"$WORK/$model.$wire.$c.ticks"
    done
  done
done

python3 - "$WORK" "$(getconf CLK_TCK)" <<'PY'
import json, sys
work, hz = sys.argv[1], int(sys.argv[2])
def load(model, wire, c):
    report = json.load(open(f"{work}/{model}.{wire}.{c}.json"))
    level = report["levels"][0]
    ticks = int(open(f"{work}/{model}.{wire}.{c}.ticks").read())
    count = level["ok"] + level["failed"]
    cpu_us = ticks * 1e6 / hz / count if count else float("nan")
    errors = sum(e["count"] for e in level["errors"].values())
    return level, cpu_us, errors
print(f"{'protocol':12} {'c':>3} {'model':7} {'req/s':>8} {'p50 µs':>8} {'p99 µs':>8} "
      f"{'server CPU µs/req':>18}")
for wire in ("http-binary", "grpc"):
    for c in (1, 16):
        cpu = {}
        p50 = {}
        for model in ("chain3", "s1"):
            level, cpu_us, errors = load(model, wire, c)
            cpu[model], p50[model] = cpu_us, level["latency_us"]["p50"]
            print(f"{wire:12} {c:>3} {model:7} {level['throughput_per_s']:>8.0f} "
                  f"{level['latency_us']['p50']:>8.1f} {level['latency_us']['p99']:>8.1f} "
                  f"{cpu_us:>18.1f}" + (f"  ({errors} errors)" if errors else ""))
        print(f"{'':12} {c:>3} per step beyond a plain request: "
              f"{(cpu['chain3'] - cpu['s1']) / 2:.1f} µs server CPU; "
              f"p50 chain3 {p50['chain3']:.0f} µs vs three chained calls ~{3 * p50['s1']:.0f} µs")
PY
