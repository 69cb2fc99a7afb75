#!/usr/bin/env bash
# Does a slow model stall a fast one's connections? Run to completion executes short batches on
# the thread that received the request; a batch the profile predicts to take longer than
# --run-inline-max-us must stay on its instance thread, or every connection sharing that io
# thread would wait for it.
#
# Starts `brigade serve` on a repository holding models/identity and "slow" (the builtin identity
# spinning --slow-ms per batch), and measures identity at concurrency 1 over HTTP: alone, then
# while a second client keeps --slow-clients requests of "slow" in flight. Both the handoff path
# (--run-inline-max-us 0) and run to completion, each on a fresh server; prints p50/p99 of the
# fast model and the slow model's answers per second.
#
# Usage: bench/inline_stall.sh [--brigade PATH] [--duration-s N] [--slow-ms N] [--slow-clients N]
#                              [--inline-us N]
# Prints; asserts nothing. On the 2-core VM the slow model's spin takes one core while it runs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BRIGADE=${BRIGADE_BIN:-$ROOT/build/brigade}
DURATION_S=5
SLOW_MS=50
SLOW_CLIENTS=2
INLINE_US=1000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --brigade) BRIGADE=$2; shift 2 ;;
    --duration-s) DURATION_S=$2; shift 2 ;;
    --slow-ms) SLOW_MS=$2; shift 2 ;;
    --slow-clients) SLOW_CLIENTS=$2; shift 2 ;;
    --inline-us) INLINE_US=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BRIGADE" ]] || { echo "no brigade binary at $BRIGADE (build it, or pass --brigade)" >&2; exit 1; }

WORK=$(mktemp -d)
SERVER_PID=""
SLOW_PID=""
cleanup() {
  [[ -z "$SLOW_PID" ]] || kill "$SLOW_PID" 2>/dev/null || true
  if [[ -n "$SERVER_PID" ]]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/repo/slow/1"
cp -r "$ROOT/models/identity" "$WORK/repo/identity"
sed -e 's/^name: "identity"/name: "slow"/' \
  -e "s/^parameters {/parameters { key: \"compute_us\" value { string_value: \"$((SLOW_MS * 1000))\" } }\nparameters {/" \
  "$ROOT/models/identity/config.pbtxt" >"$WORK/repo/slow/config.pbtxt"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ready() {
  python3 -c 'import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=1).status == 200 else 1)
except Exception:
    sys.exit(1)' "http://127.0.0.1:$PORT/v2/health/ready"
}
start_server() {
  "$BRIGADE" serve --model-repository "$WORK/repo" --http-address 127.0.0.1 --http-port "$PORT" \
    --grpc-port 0 --log-level warn --run-inline-max-us "$1" >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 300); do
    if ready; then return 0; fi
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
  done
  cat "$WORK/server.log" >&2; exit 1
}
bench() {  # model concurrency seconds output
  "$BRIGADE" bench -m "$1" -i http -u "127.0.0.1:$PORT" --concurrency "$2" --warmup-s 1 \
    --duration-s "$3" --format json --no-progress -o "$4"
}

echo "# inline stall — $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'); slow model ${SLOW_MS} ms x ${SLOW_CLIENTS} clients"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg); ${DURATION_S}s per row"
for path in handoff inline; do
  start_server "$([[ $path == inline ]] && echo "$INLINE_US" || echo 0)"
  bench identity 1 "$DURATION_S" "$WORK/$path.alone.json"
  bench slow "$SLOW_CLIENTS" "$((DURATION_S + 3))" "$WORK/$path.slow.json" &
  SLOW_PID=$!
  sleep 1.5
  bench identity 1 "$DURATION_S" "$WORK/$path.beside.json"
  wait "$SLOW_PID"; SLOW_PID=""
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
done

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
print(f"{'path':8} {'identity':16} {'p50 µs':>8} {'p99 µs':>8} {'req/s':>8}   slow req/s")
for path in ("handoff", "inline"):
    slow = json.load(open(f"{work}/{path}.slow.json"))["levels"][0]["throughput_per_s"]
    for case in ("alone", "beside"):
        level = json.load(open(f"{work}/{path}.{case}.json"))["levels"][0]
        lat = level["latency_us"]
        extra = f"{slow:10.1f}" if case == "beside" else ""
        label = "alone" if case == "alone" else "beside slow"
        print(f"{path:8} {label:16} {lat['p50']:8.1f} {lat['p99']:8.1f} "
              f"{level['throughput_per_s']:8.0f}   {extra}")
PY
