#!/bin/sh
# Times Brigade's ONNX engine against ONNX Runtime 1.30 (CPU) on the benchmark models, same
# thread count, ONNX Runtime and Brigade alternating per configuration so both see the same
# machine load. Prints a table: median latency of each and the ratio (Brigade / ONNX Runtime;
# < 1 means Brigade is faster), the same for the fastest run (less sensitive to other processes
# on a shared machine), and Brigade's conv/matmul GFLOP/s (at its median) against this CPU's
# measured FMA peak (onnx_run --peak). Results are printed, not asserted.
#
#   bench/onnx_bench.sh [MODEL ...]     (default: resnet50 mobilenet_v2 bert_base distilbert)
#   bench/onnx_bench.sh --broad [MODEL ...]   (default: make_models.py's broad set)
#
# --broad runs bench/onnx_broad.py: the broad set (make_models.py --only broad) in one table,
# Brigade's median, ORT's, the ratio, Brigade's top-3 ops by time (onnx_run --profile) and an
# output check against ORT; models Brigade cannot load get a row with the error. The same
# environment applies (BATCHES, THREADS_LIST, RUNS, WARMUP; see that script's header).
#
# Needs the same setup as bench/onnx_compare.sh (ONNX Runtime for Node, models, onnx_run).
# Environment: BUILD (default build), ORT_RUN, NODE_PATH, BATCHES (default "1 8"),
# THREADS_LIST (default "1 2"), RUNS (default 20), WARMUP (default 3), GOMP_SPINCOUNT.
# The machine should be otherwise idle: other processes on the same cores distort both columns
# (the load average is printed with the results).
#
# OpenMP wait policy: Brigade's engine runs on libgomp (oneDNN's threading runtime). libgomp's
# default spins ~300k iterations at every barrier; when other processes compete for the cores,
# a spinning thread starves its peer and 2-thread latency collapses (measured here under load:
# MobileNetV2 2 threads 2156 ms default vs 63 ms OMP_WAIT_POLICY=PASSIVE vs 59 ms
# GOMP_SPINCOUNT=10000). The script uses GOMP_SPINCOUNT=10000 (a short spin, then sleep) unless
# the environment sets it; serving should set the same (it can only be set before the process
# starts: libgomp reads it once at load).
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = --broad ]; then
  shift
  exec /usr/bin/python3 bench/onnx_broad.py "$@"
fi
BUILD=${BUILD:-build}
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
BATCHES=${BATCHES:-"1 8"}
THREADS_LIST=${THREADS_LIST:-"1 2"}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-10000}
export NODE_PATH GOMP_SPINCOUNT

[ $# -eq 0 ] && set -- resnet50 mobilenet_v2 bert_base distilbert

field() {  # field NAME JSON
  printf '%s\n' "$2" | sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); GOMP_SPINCOUNT=$GOMP_SPINCOUNT"
printf '%-13s %5s %7s %10s %10s %6s %10s %10s %6s %8s %6s\n' model batch threads \
  ort_med brig_med ratio ort_min brig_min ratio GFLOP/s %peak
for threads in $THREADS_LIST; do
  peak=$(field fma_peak_gflops "$("$BUILD/bench/onnx_run" --peak --threads "$threads")")
  for name in "$@"; do
    model=bench/models/$name.onnx
    [ -f "$model" ] || { echo "skip $name (run bench/models/make_models.py)"; continue; }
    for batch in $BATCHES; do
      ort=$(node "$ORT_RUN" "$model" --threads "$threads" --dim batch="$batch" \
              --runs "$RUNS" --warmup "$WARMUP")
      ours=$("$BUILD/bench/onnx_run" --model "$model" --threads "$threads" --batch "$batch" \
               --runs "$RUNS" --warmup "$WARMUP")
      ort_ms=$(field median_ms "$ort")
      our_ms=$(field median_ms "$ours")
      ort_min=$(field min_ms "$ort")
      our_min=$(field min_ms "$ours")
      gflops=$(field gflops_per_s "$ours")
      printf '%-13s %5s %7s %10s %10s %6s %10s %10s %6s %8s %6s\n' "$name" "$batch" "$threads" \
        "$ort_ms" "$our_ms" "$(echo "scale=2; $our_ms / $ort_ms" | bc)" \
        "$ort_min" "$our_min" "$(echo "scale=2; $our_min / $ort_min" | bc)" "$gflops" \
        "$(echo "scale=0; 100 * $gflops / $peak" | bc)%"
    done
  done
  echo "(FMA peak measured on $threads thread(s): $peak GFLOP/s)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
