#ifndef BRIGADE_ENGINE_ONNX_EXEC_BATCH_SPLIT_H_
#define BRIGADE_ENGINE_ONNX_EXEC_BATCH_SPLIT_H_

// Running a large batch as a few smaller ones. A convolutional network's activations grow with
// the batch; once one layer's output no longer fits in the last-level cache, every layer streams
// it from memory and the per-image cost rises (MobileNetV2 at batch 8 on a 32 MiB L3: +20%).
// When each output row depends only on the same input row, the Session may instead run the
// batch in equal chunks that stay in cache and concatenate the results. The numbers are the
// same unless oneDNN picks a different algorithm for the smaller batch (ResNet-50 and
// MobileNetV2 at batch 8: bit-identical).
//
//   RowsAreIndependent  the conservative proof: every graph input and output has a variable
//                       first dimension, and every node is one whose output row i reads only
//                       row i of its batched inputs (convolutions, pools, row-wise matmuls with
//                       constant weights, element-wise ops whose other operands do not vary
//                       along the first dimension, Flatten/Softmax not over axis 0). Anything
//                       else (Reshape, Shape, Gather, attention...) answers false.
//   ChunkRows           the chunk size for a batch: the largest divisor of `batch` whose arena
//                       fits in `budget_bytes`, or `batch` (no split) when the whole fits.
//
// Thread safety: pure functions.

#include <cstddef>
#include <cstdint>

#include "engine/onnx/ir/graph.h"

namespace brigade::engine::onnx {

bool RowsAreIndependent(const Graph& graph);

// `row_arena_bytes`: the arena a batch of one needs. Equal chunks keep a split run on one plan.
int64_t ChunkRows(int64_t batch, size_t row_arena_bytes, size_t budget_bytes);

// Half the L3 cache as sysfs (else sysconf) reports it, or 0 (never split) when unknown.
size_t DefaultSplitBudgetBytes();

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_BATCH_SPLIT_H_
