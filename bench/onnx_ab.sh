#!/bin/sh
# A/B of two Brigade builds against ONNX Runtime on one model configuration: per repetition runs
# ONNX Runtime, then build A's onnx_run, then build B's, so all three see the same machine load,
# and prints their median and fastest latencies (ms) with the ratios A/ORT and B/ORT. For
# deciding whether an engine change is faster on a shared machine (bench/onnx_bench.sh times one
# build only).
#
#   bench/onnx_ab.sh ONNX_RUN_A ONNX_RUN_B MODEL BATCH THREADS [RUNS] [REPS]
#
# ONNX_RUN_A/B: two onnx_run binaries (copy build/bench/onnx_run aside before rebuilding);
# MODEL: a name under bench/models (resnet50, mobilenet_v2, ...); RUNS (default 10) timed runs
# after 2 warm-up runs per engine; REPS (default 2) repetitions. Same setup and environment as
# bench/onnx_bench.sh (ORT_RUN, NODE_PATH, GOMP_SPINCOUNT default 10000).
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 5 ] || { sed -n '2,13p' "$0"; exit 2; }
A=$1 B=$2 NAME=$3 BATCH=$4 THREADS=$5 RUNS=${6:-10} REPS=${7:-2}
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-10000}
export NODE_PATH GOMP_SPINCOUNT
model=bench/models/$NAME.onnx

ms_of() {  # "median min" from one JSON line
  sed -n 's/.*"median_ms":\([0-9.]*\).*"min_ms":\([0-9.]*\).*/\1 \2/p'
}

echo "$NAME batch $BATCH threads $THREADS runs $RUNS; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ort_med ort_min a_med a_min b_med b_min a/ort b/ort"
for _ in $(seq "$REPS"); do
  o=$(node "$ORT_RUN" "$model" --threads "$THREADS" --dim batch="$BATCH" --runs "$RUNS" \
        --warmup 2 | ms_of)
  a=$("$A" --model "$model" --threads "$THREADS" --batch "$BATCH" --runs "$RUNS" --warmup 2 | ms_of)
  b=$("$B" --model "$model" --threads "$THREADS" --batch "$BATCH" --runs "$RUNS" --warmup 2 | ms_of)
  set -- $o $a $b
  echo "$1 $2 $3 $4 $5 $6 $(echo "scale=2; $3 / $1" | bc) $(echo "scale=2; $5 / $1" | bc)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
