#!/bin/sh
# Regenerates the ONNX Runtime reference outputs the demo-model test compares against
# (onnx_demo_models_test). Run from anywhere; needs node + onnxruntime-node 1.30.0 (see the header
# of /work/shared/yardstick/ort-run.js) — the test itself needs neither.
#
#   src/engine/onnx/testdata/make_references.sh
#
# For each demo model M.onnx it writes M.ort/ with ort-run.js's dump: manifest.json, the seeded
# random input batch (4 images) and ONNX Runtime's outputs, as raw little-endian files.
set -eu
cd "$(dirname "$0")"
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
export NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
for model in fashion_mnist fashion_mnist_small; do
  rm -rf "$model.ort"
  node "$ORT_RUN" "$model.onnx" --threads 1 --runs 1 --warmup 0 --dim batch=4 --seed 7 \
       --dump "$model.ort"
done
