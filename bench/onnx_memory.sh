#!/bin/sh
# Peak memory of Brigade's ONNX engine against ONNX Runtime on the same files (issue 24, item 4).
# Prints, per model: Brigade's peak RSS (and with --keep-sources, the engine before it freed the
# initializers it packed), ONNX Runtime's peak RSS net of its process baseline, the bytes of the
# file's initializers and Brigade's peak over them, and what a second instance of the model adds
# to the peak and to the RSS after its first run (same process), next to one instance's
# activation arena. Printed, never asserted.
#
#   bench/onnx_memory.sh [MODEL.onnx ...]   (default: resnet50, mobilenet_v2, distilbert, bert_base)
#
# Each figure is the "Maximum resident set size" of /usr/bin/time -v for one process that loads
# the model and runs it twice (batch 1, one thread, no warm-up). Baselines: the same process on
# src/engine/onnx/testdata/fashion_mnist_small.onnx (a 0.1 MB model), measured in the same run.
# Needs: /usr/bin/time, python3 (to sum the initializers), onnx_run built
# (ninja -C $BUILD onnx_run), and for ONNX Runtime the yardstick (bench/onnx_compare.sh says how).
# Environment: BUILD (default build), ORT_RUN, NODE_PATH (default /tmp/ort/node_modules).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
export NODE_PATH
TINY=src/engine/onnx/testdata/fashion_mnist_small.onnx

if [ $# -eq 0 ]; then
  set -- bench/models/resnet50.onnx bench/models/mobilenet_v2.onnx bench/models/distilbert.onnx \
         bench/models/bert_base.onnx
fi

# Peak RSS in MB (10^6 bytes) of the command's process.
peak_mb() {
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident set size/ { printf "%.0f", $6 * 1024 / 1e6 }'
}

# Bytes of the file's graph initializers (raw_data), from the protobuf wire format.
weights_mb() {
  python3 - "$1" <<'EOF'
import sys
def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b, i, end):
    while i < end:
        key, i = varint(b, i); f, t = key >> 3, key & 7
        if t == 0: _, i = varint(b, i); continue
        if t == 1: i += 8; continue
        if t == 5: i += 4; continue
        n, i = varint(b, i); yield f, i, i + n; i += n
b = open(sys.argv[1], 'rb').read()
total = 0
for f, s, e in fields(b, 0, len(b)):
    if f != 7: continue                                  # ModelProto.graph
    for g, s2, e2 in fields(b, s, e):
        if g != 5: continue                              # GraphProto.initializer
        total += sum(e3 - s3 for h, s3, e3 in fields(b, s2, e2) if h == 9)  # raw_data
print(f"{total / 1e6:.0f}")
EOF
}

brigade() { peak_mb "$BUILD/bench/onnx_run" --runs 2 --warmup 0 --model "$@"; }
ort() { peak_mb node "$ORT_RUN" "$1" --threads 1 --runs 2 --warmup 0; }

brigade_base=$(brigade "$TINY")
ort_base=$(ort "$TINY")
echo "baselines (peak RSS on $(basename $TINY)): Brigade $brigade_base MB, ONNX Runtime $ort_base MB"
echo
echo "| model | weights MB | Brigade peak MB | (keeping sources) | Brigade net MB | ORT peak MB net | Brigade / weights | 2nd instance: peak MB | RSS MB | arena MB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for model in "$@"; do
  if [ ! -f "$model" ]; then
    echo "skip $model (missing)" >&2
    continue
  fi
  name=$(basename "$model" .onnx)
  weights=$(weights_mb "$model")
  one=$(brigade "$model")
  kept=$(brigade "$model" --keep-sources)
  two=$(brigade "$model" --instances 2)
  json=$("$BUILD/bench/onnx_run" --runs 1 --warmup 0 --instances 2 --model "$model")
  arena=$(echo "$json" | sed -n 's/.*"arena_mib":\([0-9.]*\).*/\1/p')
  # RSS the second instance adds after its first run, in the same process (MiB -> MB).
  added=$(echo "$json" | awk -F'"rss_mib_one_instance":|,"rss_mib":|,"packed_mib"' \
          '{ printf "%.1f", ($3 - $2) * 1048576 / 1e6 }')
  ort_peak=$(ort "$model")
  echo "| $name | $weights | $one | $kept | $((one - brigade_base)) | $((ort_peak - ort_base)) |" \
       "$(awk -v a="$one" -v w="$weights" 'BEGIN { printf "%.2f", a / w }') |" \
       "$((two - one)) | $added | $(awk -v m="$arena" 'BEGIN { printf "%.1f", m * 1048576 / 1e6 }') |"
done
