#!/usr/bin/env bash
# What nginx in front costs: 1, 2 and 3 `brigade serve` instances behind deploy/local/run's nginx
# against one instance direct, on the builtin identity model (no compute, so the serving stack's
# and the proxy's own cost is all there is), HTTP JSON and gRPC, closed loop at c=1 and c=16;
# `nginx+3ka` is 3 instances with gRPC upstream keepalive (--grpc-keepalive 64).
#
#   bench/deploy_bench.sh                     DURATION_S=5 per level, REPEATS=1
#   DURATION_S=10 REPEATS=3 bench/deploy_bench.sh
#
# Prints one CSV line per (setup, protocol, concurrency, repeat) and then the medians. On a
# 2-core machine the load generator, nginx and the instances share the cores: more instances do
# not add capacity there, so read the numbers as nginx's cost per request, not as scaling.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${BRIGADE_BIN:-$here/build/brigade}
duration=${DURATION_S:-5}
repeats=${REPEATS:-1}
http_port=${HTTP_PORT:-18580}
grpc_port=${GRPC_PORT:-18581}

repo=$(mktemp -d)
results=$(mktemp)
run_pid=
cleanup() {
  if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
    kill -TERM "$run_pid"
    wait "$run_pid" || true
  fi
  rm -rf "$repo" "$results"
}
trap cleanup EXIT
cp -r "$here/models/identity" "$repo/"

# bench LABEL ADDRESS: one line per protocol and concurrency into $results.
bench() {
  local label=$1 address=$2 protocol url
  for protocol in http grpc; do
    url=$address
    [ "$protocol" = grpc ] && url=$3
    "$bin" bench -m identity -i "$protocol" -u "$url" --concurrency 1,16 --duration-s "$duration" \
      --warmup-s 1 --no-server-stats --no-progress -f csv 2>/dev/null |
      awk -F, -v label="$label" 'NR > 1 { printf "%s,%s,%s,%.0f,%.0f,%.0f\n", label, $2, $5, $11, $13, $16 }' |
      tee -a "$results"
  done
}

echo "setup,protocol,concurrency,requests_per_s,p50_us,p99_us"
for repeat in $(seq 1 "$repeats"); do
  for n in 1 2 3 3k; do
    keepalive=0
    [ "$n" = 3k ] && { n=3; keepalive=64; }
    workdir=$(mktemp -d)
    "$here/deploy/local/run" --instances "$n" --no-redis --model-repository "$repo" \
      --workdir "$workdir" --http-port "$http_port" --grpc-port "$grpc_port" --brigade "$bin" \
      --grpc-keepalive "$keepalive" \
      > "$workdir/run.out" 2>&1 &
    run_pid=$!
    for _ in $(seq 1 600); do
      grep -qs "ready:" "$workdir/run.out" && break
      kill -0 "$run_pid" 2>/dev/null || { cat "$workdir/run.out" >&2; exit 1; }
      sleep 0.1
    done
    if [ "$n" -eq 1 ]; then
      direct_http=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["instances"][0]; print(s["http_port"], s["grpc_port"])' "$workdir/state.json")
      read -r dh dg <<<"$direct_http"
      bench "direct" "127.0.0.1:$dh" "127.0.0.1:$dg"
    fi
    label="nginx+$n"
    [ "$keepalive" -gt 0 ] && label="nginx+${n}ka"
    bench "$label" "127.0.0.1:$http_port" "127.0.0.1:$grpc_port"
    kill -TERM "$run_pid"
    wait "$run_pid" || true
    run_pid=
    rm -rf "$workdir"
  done
done

echo
echo "medians over $repeats run(s), ${duration} s per level; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'EOF'
import csv, statistics, sys
rows = {}
for setup, protocol, c, rps, p50, p99 in csv.reader(open(sys.argv[1])):
    rows.setdefault((protocol, int(c), setup), []).append((float(rps), float(p50), float(p99)))
print(f"{'protocol':8} {'c':>3} {'setup':9} {'req/s':>8} {'p50 us':>7} {'p99 us':>7}  vs direct")
for (protocol, c, setup) in sorted(rows, key=lambda k: (k[0], k[1], k[2] != "direct", k[2])):
    runs = rows[(protocol, c, setup)]
    rps, p50, p99 = (statistics.median(r[i] for r in runs) for i in range(3))
    direct = rows.get((protocol, c, "direct"))
    note = ""
    if direct and setup != "direct":
        d_rps, d_p50 = (statistics.median(r[i] for r in direct) for i in range(2))
        # At c=1 the added p50 is the proxy's latency per request; at c=16 the machine is full,
        # so the CPU time per request grows by 2 cores / rate.
        note = f"  p50 {p50 - d_p50:+.0f} us, rate {rps / d_rps:.2f}x"
        if c > 1:
            note += f", CPU/request {2e6 / rps - 2e6 / d_rps:+.0f} us"
    print(f"{protocol:8} {c:>3} {setup:9} {rps:>8.0f} {p50:>7.0f} {p99:>7.0f}{note}")
EOF
