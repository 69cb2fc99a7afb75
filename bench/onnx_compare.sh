#!/bin/sh
# Compares Brigade's ONNX engine with ONNX Runtime, output by output: max absolute and relative
# error per model, and whether every element is within 1e-5 abs + 1e-4 rel of ONNX Runtime's.
#
#   bench/onnx_compare.sh [MODEL.onnx ...]     (default: bench/models/*.onnx and the demo models)
#
# Needs (not needed by the project's tests):
#   * ONNX Runtime for Node:  mkdir -p /tmp/ort && cd /tmp/ort && npm init -y &&
#                             npm install --ignore-scripts onnxruntime-node@1.30.0
#   * the yardstick script:   ORT_RUN (default /work/shared/yardstick/ort-run.js)
#   * the models:             /usr/bin/python3 bench/models/make_models.py
#   * onnx_run built:         ninja -C $BUILD onnx_run        (BUILD default: build)
# Environment: BUILD, ORT_RUN, NODE_PATH (default /tmp/ort/node_modules), BATCH (default 2),
# THREADS (default 1).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
BATCH=${BATCH:-2}
THREADS=${THREADS:-1}
export NODE_PATH

if [ $# -eq 0 ]; then
  set -- bench/models/resnet50.onnx bench/models/mobilenet_v2.onnx bench/models/bert_base.onnx \
         bench/models/distilbert.onnx src/engine/onnx/testdata/fashion_mnist.onnx \
         src/engine/onnx/testdata/fashion_mnist_small.onnx
fi

status=0
for model in "$@"; do
  if [ ! -f "$model" ]; then
    echo "skip $model (missing)"
    continue
  fi
  dump=$(mktemp -d /tmp/onnx_compare.XXXXXX)
  node "$ORT_RUN" "$model" --threads "$THREADS" --runs 1 --warmup 0 --dim batch="$BATCH" \
       --dump "$dump" > /dev/null
  if ! "$BUILD/bench/onnx_run" --model "$model" --threads "$THREADS" --compare "$dump"; then
    status=1
  fi
  rm -rf "$dump"
done
exit $status
