#!/bin/sh
# Compares Brigade's engine with ONNX Runtime on bench model control_flow on inputs that take
# each branch of its If: `onnx_compare.sh` draws random inputs in [-1, 1), which take one branch
# only. Inputs shifted by +0.8 leave mean(h) > 0 after the Loop (then-branch, "positive" Linear),
# by -0.8 below 0 (else-branch); the script prints which branch a float64 numpy reference of the
# loop takes, then onnx_run's comparison (max abs / rel error, "match" within 1e-5 abs + 1e-4 rel).
#
#   bench/onnx_control_flow_check.sh            (batches 1, 2 and 8)
#
# Needs what bench/onnx_compare.sh needs (ONNX Runtime for Node, ort-run.js, onnx_run built) and
# the model: /usr/bin/python3 bench/models/make_models.py --only control_flow. Environment: BUILD
# (default build), ORT_RUN (default /work/shared/yardstick/ort-run.js), NODE_PATH (default
# /tmp/ort/node_modules), BATCHES (default "1 2 8").
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
BATCHES=${BATCHES:-1 2 8}
export NODE_PATH
model=bench/models/control_flow.onnx

status=0
for b in $BATCHES; do
  for sign in pos neg; do
    dump=$(mktemp -d /tmp/onnx_control_flow.XXXXXX)
    /usr/bin/python3 - "$model" "$dump/input.bin" "$sign" "$b" <<'PY'
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model, path, sign, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rng = np.random.default_rng(7)
x = (rng.uniform(-1, 1, (batch, 64)) + (0.8 if sign == "pos" else -0.8)).astype(np.float32)
x.tofile(path)
w = {t.name: numpy_helper.to_array(t) for t in onnx.load(model).graph.initializer}
h = x.astype(np.float64)
for _ in range(64 // 16):  # ControlFlow.forward in bench/models/make_models.py
    h = np.tanh(h @ w["step.weight"].T + w["step.bias"]) + h
branch = "then (positive)" if h.mean() > 0 else "else (negative)"
print(f"batch {batch}, inputs {sign}: mean(h) = {h.mean():+.4f} -> {branch}")
PY
    node "$ORT_RUN" "$model" --threads 1 --runs 1 --warmup 0 --dim batch="$b" \
         --input input="$dump/input.bin" --dump "$dump" > /dev/null
    if ! "$BUILD/bench/onnx_run" --model "$model" --threads 1 --compare "$dump"; then
      status=1
    fi
    rm -rf "$dump"
  done
done
exit $status
