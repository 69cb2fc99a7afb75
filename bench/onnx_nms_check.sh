#!/bin/sh
# Compares Brigade's NonMaxSuppression with ONNX Runtime's on random boxes: a model of one
# NonMaxSuppression node (boxes [2, 200, 4], scores [2, 3, 200], max_output_boxes_per_class,
# iou_threshold and score_threshold as graph inputs) followed by a Gather of the kept boxes'
# coordinates, so the data-dependent row count flows into a later op. For each seed and both box
# formats it draws boxes (clustered, so that many overlap, half of them with their corners
# swapped), runs ONNX Runtime (ort-run.js --dump) and onnx_run --compare, which requires the
# selected indices to be identical and the gathered boxes equal.
#
#   bench/onnx_nms_check.sh                     (seeds 1 2 3)
#
# Needs ONNX Runtime for Node, ort-run.js, /usr/bin/python3 with onnx and numpy, and onnx_run
# built. Environment: BUILD (default build), ORT_RUN (default /work/shared/yardstick/ort-run.js),
# NODE_PATH (default /tmp/ort/node_modules), SEEDS (default "1 2 3").
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ORT_RUN=${ORT_RUN:-/work/shared/yardstick/ort-run.js}
NODE_PATH=${NODE_PATH:-/tmp/ort/node_modules}
SEEDS=${SEEDS:-1 2 3}
export NODE_PATH

status=0
for seed in $SEEDS; do
  for center in 0 1; do
    dir=$(mktemp -d /tmp/onnx_nms.XXXXXX)
    /usr/bin/python3 - "$dir" "$seed" "$center" <<'PY'
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out, seed, center = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
B, C, S = 2, 3, 200
f32, i64 = TensorProto.FLOAT, TensorProto.INT64
graph = helper.make_graph(
    [
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"],
                         ["sel"], center_point_box=center),
        helper.make_node("Gather", ["sel", "two"], ["box_index"], axis=1),
        helper.make_node("Reshape", ["boxes", "flat"], ["boxes2d"]),
        helper.make_node("Gather", ["boxes2d", "box_index"], ["kept"]),
    ],
    "nms",
    [helper.make_tensor_value_info("boxes", f32, [B, S, 4]),
     helper.make_tensor_value_info("scores", f32, [B, C, S]),
     helper.make_tensor_value_info("max", i64, [1]),
     helper.make_tensor_value_info("iou", f32, [1]),
     helper.make_tensor_value_info("score", f32, [1])],
    [helper.make_tensor_value_info("sel", i64, ["n", 3]),
     helper.make_tensor_value_info("kept", f32, ["n", 4])],
    [helper.make_tensor("two", i64, [], [2]), helper.make_tensor("flat", i64, [2], [-1, 4])])
# Batch 1's boxes index the reshaped [B*S, 4] boxes as batch 0's: the Gather only checks that
# the row count and the indices flow through, so it reads batch 0's rows for both batches.
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
onnx.checker.check_model(model)
onnx.save(model, f"{out}/nms.onnx")
rng = np.random.default_rng(seed)
centers = rng.uniform(0, 10, (B, S, 2)).round(1)  # clustered: many boxes overlap
sizes = rng.uniform(2, 6, (B, S, 2))
if center:
    boxes = np.concatenate([centers, sizes], axis=2)
else:
    lo, hi = centers - sizes / 2, centers + sizes / 2
    boxes = np.concatenate([lo, hi], axis=2)[..., [1, 0, 3, 2]]  # [y1, x1, y2, x2]
    swap = rng.uniform(size=(B, S)) < 0.5
    boxes[swap] = boxes[swap][:, [2, 3, 0, 1]]
scores = rng.uniform(0, 1, (B, C, S)).round(2)  # rounded: many equal scores
boxes.astype(np.float32).tofile(f"{out}/boxes.bin")
scores.astype(np.float32).tofile(f"{out}/scores.bin")
np.array([100], np.int64).tofile(f"{out}/max.bin")
np.array([0.4], np.float32).tofile(f"{out}/iou.bin")
np.array([0.3], np.float32).tofile(f"{out}/score.bin")
PY
    node "$ORT_RUN" "$dir/nms.onnx" --threads 1 --runs 1 --warmup 0 --dump "$dir" \
         --input boxes="$dir/boxes.bin" --input scores="$dir/scores.bin" \
         --input max="$dir/max.bin" --input iou="$dir/iou.bin" --input score="$dir/score.bin" \
         > /dev/null
    echo "seed $seed, center_point_box $center:"
    if ! "$BUILD/bench/onnx_run" --model "$dir/nms.onnx" --threads 1 --runs 1 --warmup 0 \
         --compare "$dir"; then
      status=1
    fi
    rm -rf "$dir"
  done
done
exit $status
