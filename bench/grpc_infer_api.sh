#!/usr/bin/env bash
# gRPC's three server APIs against each other for ModelInfer, with HTTP binary beside them.
#
# Starts three `brigade serve` processes on the identity model (16 floats in, the same out), one
# per --grpc-infer-api: callback (gRPC's own threads), completion-queue (Brigade's pollers, one
# per CPU the server may use) and sync (gRPC's synchronous pool with as many pollers). Each
# server is pinned to CPU 0 with one HTTP io thread; `brigade bench` runs on CPU 1. Every round
# measures, in an order that rotates from round to round (so host drift and the run-after effect
# hit every case), gRPC on each server and HTTP binary on the callback one, at each concurrency.
# Per run: requests/s and p50/p99 at the client, and the server's CPU per request: utime + stime
# from /proc/PID/stat over the run divided by the requests the client completed in it (warm-up
# excluded on both sides). Then the median of the rounds per case, and each gRPC API's CPU per
# request and p50 over HTTP binary's (issue 22's aim: gRPC overhead <= 1.5x HTTP binary's).
# Prints; asserts nothing.
#
# Usage: bench/grpc_infer_api.sh [--brigade PATH] [--duration-s N] [--warmup-s N] [--rounds R]
#                                [--concurrency "1 16"]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BRIGADE=${BRIGADE_BIN:-$ROOT/build/brigade}
DURATION_S=4
WARMUP_S=1
ROUNDS=3
LEVELS="1 16"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --brigade) BRIGADE=$2; shift 2 ;;
    --duration-s) DURATION_S=$2; shift 2 ;;
    --warmup-s) WARMUP_S=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --concurrency) LEVELS=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BRIGADE" ]] || { echo "no brigade binary at $BRIGADE (build it, or pass --brigade)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "needs taskset (util-linux)" >&2; exit 1; }
[[ $(nproc) -ge 2 ]] || { echo "needs two CPUs: servers on one, the client on the other" >&2; exit 1; }

# WORK, PIDS (stopped at exit), free_port, cpu_ticks.
source "$ROOT/bench/server_run.sh"
mkdir -p "$WORK/repo"
cp -r "$ROOT/models/identity" "$WORK/repo/"

declare -A PID HTTP GRPC
APIS=(callback completion-queue sync)
for api in "${APIS[@]}"; do
  HTTP[$api]=$(free_port)
  GRPC[$api]=$(free_port)
  taskset -c 0 "$BRIGADE" serve --model-repository "$WORK/repo" --log-level warn \
    --http-address 127.0.0.1 --http-port "${HTTP[$api]}" --http-thread-count 1 \
    --grpc-address 127.0.0.1 --grpc-port "${GRPC[$api]}" --grpc-infer-api "$api" \
    >"$WORK/$api.log" 2>&1 &
  PID[$api]=$!
  PIDS+=("${PID[$api]}")
done
for api in "${APIS[@]}"; do
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:${HTTP[$api]}/v2/health/ready" >/dev/null && continue 2
    kill -0 "${PID[$api]}" 2>/dev/null || { echo "$api server exited:" >&2; cat "$WORK/$api.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$api server not ready after 30 s" >&2; exit 1
done

# One run: case name ($1: grpc-<api> or http-binary), concurrency ($2), round ($3).
measure() {
  local name=$1 c=$2 round=$3 api args before after
  if [[ $name == http-binary ]]; then
    api=callback
    args=(-i http -u "127.0.0.1:${HTTP[$api]}" --http-binary)
  else
    api=${name#grpc-}
    args=(-i grpc -u "127.0.0.1:${GRPC[$api]}")
  fi
  # The warm-up is a run of its own so that the CPU window holds only measured requests.
  taskset -c 1 "$BRIGADE" bench -m identity "${args[@]}" --concurrency "$c" --warmup-s 0 \
    --duration-s "$WARMUP_S" --no-server-stats --no-progress --format json -o /dev/null
  before=$(cpu_ticks "${PID[$api]}")
  taskset -c 1 "$BRIGADE" bench -m identity "${args[@]}" --concurrency "$c" --warmup-s 0 \
    --duration-s "$DURATION_S" --no-server-stats --no-progress --format json \
    -o "$WORK/$name.$c.$round.json"
  after=$(cpu_ticks "${PID[$api]}")
  echo $((after - before)) >"$WORK/$name.$c.$round.cpu"
}

CASES=(grpc-callback grpc-completion-queue grpc-sync http-binary)
echo "# grpc_infer_api: identity, ${WARMUP_S}s warm-up + ${DURATION_S}s per run, $ROUNDS rounds; servers on CPU 0, client on CPU 1"
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  for c in $LEVELS; do
    for ((k = 0; k < ${#CASES[@]}; ++k)); do
      measure "${CASES[$(((k + round - 1) % ${#CASES[@]}))]}" "$c" "$round"
    done
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK" "$(getconf CLK_TCK)" "$ROUNDS" "$LEVELS" "${CASES[@]}" <<'PY'
import json, statistics, sys
work, hz, rounds, levels, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(), sys.argv[5:]
def run(name, c, r):
    level = json.load(open(f"{work}/{name}.{c}.{r}.json"))["levels"][0]
    ticks = int(open(f"{work}/{name}.{c}.{r}.cpu").read())
    done = level["ok"] + level["failed"]
    errors = level["failed"]
    return {"rps": level["throughput_per_s"], "p50": level["latency_us"]["p50"],
            "p99": level["latency_us"]["p99"], "cpu": ticks * 1e6 / hz / done if done else float("nan"),
            "errors": errors}
print(f"{'c':>3}  {'case':<22} {'req/s':>8} {'p50 µs':>8} {'p99 µs':>8} {'CPU µs/req':>11}  "
      f"{'CPU / HTTP bin':>14} {'p50 / HTTP bin':>14}  per-round CPU µs/req")
for c in levels:
    med = {}
    for name in cases:
        runs = [run(name, c, r) for r in range(1, rounds + 1)]
        med[name] = {k: statistics.median(x[k] for x in runs) for k in ("rps", "p50", "p99", "cpu")}
        med[name]["rounds"] = " ".join(f"{x['cpu']:.1f}" for x in runs)
        med[name]["errors"] = sum(x["errors"] for x in runs)
    ref = med["http-binary"]
    for name in cases:
        m = med[name]
        print(f"{c:>3}  {name:<22} {m['rps']:8.0f} {m['p50']:8.1f} {m['p99']:8.1f} {m['cpu']:11.1f}  "
              f"{m['cpu'] / ref['cpu']:14.2f} {m['p50'] / ref['p50']:14.2f}  {m['rounds']}"
              + (f"  ({m['errors']} errors)" if m["errors"] else ""))
PY
