#!/bin/sh
# Issue 24 item 3: how much each engine slows when another process keeps one core busy. Times
# ONNX Runtime and Brigade's onnx_run on MODEL (batch 1, THREADS threads) on an otherwise idle
# machine and beside a CPU burner pinned to the last core, for each of Brigade's OpenMP wait
# settings (libgomp's default spin, GOMP_SPINCOUNT=10000, OMP_WAIT_POLICY=PASSIVE), and prints
# each one's median, its busy/idle slowdown, and Brigade/ORT in both scenes. Printed, not
# asserted; run it on a machine with nothing else on it (the burner is the only neighbour).
#
#   bench/onnx_contention.sh MODEL [THREADS] [RUNS] [REPS]
#
# MODEL: a name under bench/models; THREADS (default 2), RUNS (default 10) timed runs after 2
# warm-up runs, REPS (default 3) alternations per scene. Environment: BUILD (default build),
# ORT_RUN, NODE_PATH as for bench/onnx_bench.sh.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
NAME=$1 THREADS=${2:-2} RUNS=${3:-10} REPS=${4:-3}
BUILD=${BUILD:-build}
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
export NODE_PATH
model=bench/models/$NAME.onnx
onnx_run=$BUILD/bench/onnx_run
last_cpu=$(($(nproc) - 1))

median_of() {  # the median_ms of one JSON line
  sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p'
}
median() {  # the median of the numbers on stdin
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ort() {
  node "$ORT_RUN" "$model" --threads "$THREADS" --dim batch=1 --runs "$RUNS" --warmup 2 | median_of
}
brigade() {  # $1: the wait setting
  case $1 in
    spin) env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY "$onnx_run" --model "$model" \
            --threads "$THREADS" --batch 1 --runs "$RUNS" --warmup 2 ;;
    spin10000) env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=10000 "$onnx_run" --model "$model" \
                 --threads "$THREADS" --batch 1 --runs "$RUNS" --warmup 2 ;;
    passive) env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=PASSIVE "$onnx_run" --model "$model" \
               --threads "$THREADS" --batch 1 --runs "$RUNS" --warmup 2 ;;
  esac | median_of
}

burner=''
stop_burner() { [ -n "$burner" ] && kill "$burner" 2>/dev/null; burner=''; }
trap stop_burner EXIT INT TERM

out=$(mktemp -d)
echo "$NAME batch 1 threads $THREADS runs $RUNS reps $REPS; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for scene in idle busy; do
  if [ "$scene" = busy ]; then
    taskset -c "$last_cpu" sh -c 'while :; do :; done' &
    burner=$!
    sleep 1
  fi
  for _ in $(seq "$REPS"); do
    ort >> "$out/$scene.ort"
    for wait in spin spin10000 passive; do brigade "$wait" >> "$out/$scene.$wait"; done
  done
  stop_burner
done
printf '%-22s %10s %10s %10s %12s %12s\n' engine idle_ms busy_ms busy/idle idle_vs_ort busy_vs_ort
ort_idle=$(median < "$out/idle.ort") ort_busy=$(median < "$out/busy.ort")
for engine in ort spin spin10000 passive; do
  idle=$(median < "$out/idle.$engine") busy=$(median < "$out/busy.$engine")
  label=$engine; [ "$engine" = ort ] || label="brigade $engine"
  printf '%-22s %10.2f %10.2f %10.2f %12.2f %12.2f\n' "$label" "$idle" "$busy" \
    "$(echo "$busy / $idle" | bc -l)" "$(echo "$idle / $ort_idle" | bc -l)" \
    "$(echo "$busy / $ort_busy" | bc -l)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$out"
