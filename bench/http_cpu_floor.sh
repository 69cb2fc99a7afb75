#!/usr/bin/env bash
# Server CPU per request: Brigade's identity model over HTTP JSON against nginx answering the
# same bytes from a `return 200`, both under the same wrk load.
#
# nginx parses the request and writes a fixed answer with no application code at all, so its
# CPU per request on this host is the floor that the kernel's loopback TCP, the syscalls and an
# HTTP/1.1 parser cost; what Brigade spends above it is its own code (JSON decode, the pipeline,
# the scheduler, the model, JSON encode). Each server runs alone, pinned to the first CPU, with
# one worker (nginx) or one io thread (Brigade, --http-thread-count 1); wrk (1 thread, -c
# connections) runs on the second CPU. CPU time is the server's utime + stime from
# /proc/PID/stat over each measured run (clock ticks, 100 per second here), divided by the
# requests wrk completed in it. Rounds alternate the servers so drift on the host hits all.
# Prints; asserts nothing.
#
# --baseline PATH adds a second Brigade binary (e.g. one built from an earlier commit) to every
# round, so a change to the hot path is compared side by side, under the same host drift.
#
# Usage: bench/http_cpu_floor.sh [--brigade PATH] [--baseline PATH] [--duration-s N]
#                                [--connections C] [--rounds R]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BRIGADE=${BRIGADE_BIN:-$ROOT/build/brigade}
BASELINE=""
DURATION_S=5
CONNECTIONS=16
ROUNDS=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --brigade) BRIGADE=$2; shift 2 ;;
    --baseline) BASELINE=$2; shift 2 ;;
    --duration-s) DURATION_S=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BRIGADE" ]] || { echo "no brigade binary at $BRIGADE (build it, or pass --brigade)" >&2; exit 1; }
[[ -z "$BASELINE" || -x "$BASELINE" ]] || { echo "no brigade binary at $BASELINE (--baseline)" >&2; exit 1; }
for tool in wrk nginx taskset curl; do
  command -v "$tool" >/dev/null || { echo "needs $tool (scripts/setup installs it)" >&2; exit 1; }
done
[[ $(nproc) -ge 2 ]] || { echo "needs two CPUs: server and wrk on one each" >&2; exit 1; }

# WORK, PIDS (stopped at exit), free_port, cpu_ticks.
source "$ROOT/bench/server_run.sh"

# The request and the answer Brigade gives it, byte for byte in the body.
DATA="0,0.25,0.5,0.75,1,1.25,1.5,1.75,2,2.25,2.5,2.75,3,3.25,3.5,3.75"
cat >"$WORK/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","data":[$DATA]}]}'
wrk.headers["Content-Type"] = "application/json"
EOF

mkdir -p "$WORK/repo" "$WORK/nginx"
cp -r "$ROOT/models/identity" "$WORK/repo/"
REQUEST="{\"inputs\":[{\"name\":\"INPUT0\",\"shape\":[1,16],\"datatype\":\"FP32\",\"data\":[$DATA]}]}"

# Starts `brigade serve` ($1: binary, $2: log name) on CPU 0; sets STARTED_PID and STARTED_URL.
start_brigade() {
  local port
  port=$(free_port)
  taskset -c 0 "$1" serve --model-repository "$WORK/repo" --http-port "$port" --grpc-port 0 \
    --http-thread-count 1 >"$WORK/$2.log" 2>&1 &
  STARTED_PID=$!
  PIDS+=("$STARTED_PID")
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/v2/health/ready" >/dev/null && break
    sleep 0.1
  done
  STARTED_URL="http://127.0.0.1:$port/v2/models/identity/infer"
  curl -sf -H 'Content-Type: application/json' --data-binary "$REQUEST" "$STARTED_URL" \
    >"$WORK/$2.answer" || { echo "$1 did not answer; log:" >&2; cat "$WORK/$2.log" >&2; exit 1; }
}
start_brigade "$BRIGADE" brigade
BRIGADE_PID=$STARTED_PID
URL_BRIGADE=$STARTED_URL
ANSWER=$(cat "$WORK/brigade.answer")
if [[ -n "$BASELINE" ]]; then
  start_brigade "$BASELINE" baseline
  BASELINE_PID=$STARTED_PID
  URL_BASELINE=$STARTED_URL
fi

NGINX_PORT=$(free_port)
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/body;
  default_type application/json;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / { return 200 '$ANSWER'; }
  }
}
EOF
taskset -c 0 nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" &
NGINX_PID=$!
PIDS+=("$NGINX_PID")
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$NGINX_PORT/" >/dev/null && break; sleep 0.1; done
URL_NGINX="http://127.0.0.1:$NGINX_PORT/v2/models/identity/infer"

# One measured wrk run against a server; prints "req/s cpu_us_per_req p50_us p99_us".
measure() {
  local pid=$1 url=$2 before after requests
  taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d1s -s "$WORK/post.lua" "$url" >/dev/null
  before=$(cpu_ticks "$pid")
  taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${DURATION_S}s" --latency -s "$WORK/post.lua" "$url" \
    >"$WORK/wrk.txt"
  after=$(cpu_ticks "$pid")
  if grep -q "Non-2xx" "$WORK/wrk.txt"; then
    echo "non-2xx answers from $url:" >&2; cat "$WORK/wrk.txt" >&2; exit 1
  fi
  requests=$(awk '/requests in/ {print $1}' "$WORK/wrk.txt")
  awk -v ticks=$((after - before)) -v n="$requests" -v s="$DURATION_S" '
    function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; return v * 1e6 }
    / 50% / { p50 = us($2) } / 99% / { p99 = us($2) }
    END { printf "%9.0f %10.2f %8.1f %8.1f\n", n / s, ticks * 1e4 / n, p50, p99 }' "$WORK/wrk.txt"
}

echo "# http_cpu_floor: wrk -t1 -c$CONNECTIONS, ${DURATION_S}s per run, $ROUNDS rounds; server on CPU 0, wrk on CPU 1"
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# brigade: $BRIGADE${BASELINE:+; baseline: $BASELINE}"
printf "%-6s %-8s %9s %10s %8s %8s\n" round server "req/s" "cpu_us/req" "p50_us" "p99_us"
# The servers' order rotates from round to round: the run after another server's inherits its
# disturbance (caches, the client's state), and no server should always take that place.
servers=(nginx brigade)
[[ -n "$BASELINE" ]] && servers+=(baseline)
for round in $(seq "$ROUNDS"); do
  for ((k = 0; k < ${#servers[@]}; ++k)); do
    server=${servers[$(((k + round - 1) % ${#servers[@]}))]}
    case "$server" in
      nginx) result=$(measure "$NGINX_PID" "$URL_NGINX") ;;
      brigade) result=$(measure "$BRIGADE_PID" "$URL_BRIGADE") ;;
      baseline) result=$(measure "$BASELINE_PID" "$URL_BASELINE") ;;
    esac
    printf "%-6s %-8s %s\n" "$round" "$server" "$result"
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
