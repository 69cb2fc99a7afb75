// NonMaxSuppression (opsets 10 – 11): per batch and class, greedily keeps the highest-scoring
// boxes, dropping each box whose IoU with one already kept exceeds iou_threshold.
//
//   boxes [B, S, 4] float, scores [B, C, S] float, max_output_boxes_per_class (int64, 1 value,
//   default 0), iou_threshold (float, default 0), score_threshold (float, optional)
//   → selected_indices int64 [N, 3] rows (batch, class, box), ordered by batch, then class, then
//     selection order (descending score, the lower box index first among equal scores)
//
// N is known only after the run, so the kernel is registered with `dynamic_output`: the factory
// describes the most rows a run may write (B·C·min(S, max boxes when known at plan time)), and
// Run() reports N (RunContext::dynamic_shape); the planner plans the nodes after it per N.
//
// Semantics follow the ONNX specification and its reference: a box is a candidate when its score
// is above score_threshold (strictly); NaN scores are never candidates (they have no order);
// corners come in either order (center_point_box 0: [y1, x1, y2, x2]) or as [x_center,
// y_center, width, height] (center_point_box 1); a pair whose intersection or union is empty, or
// where either box has no area, does not suppress. A negative max_output_boxes_per_class or an
// iou_threshold outside [0, 1] fails the run (INVALID_ARGUMENT), as ONNX Runtime does.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "core/check.h"
#include "core/status_macros.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// Corners of one box, each pair ordered.
struct Box {
  float y_min, x_min, y_max, x_max;
};

Box ReadBox(const float* b, bool center) {
  if (center) {
    const float half_w = b[2] / 2, half_h = b[3] / 2;
    return Box{b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
  }
  return Box{std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]),
             std::max(b[1], b[3])};
}

// IoU(a, b) > threshold, with empty intersections, unions and areas never suppressing.
bool Suppresses(const Box& a, const Box& b, float threshold) {
  const float y_min = std::max(a.y_min, b.y_min), y_max = std::min(a.y_max, b.y_max);
  const float x_min = std::max(a.x_min, b.x_min), x_max = std::min(a.x_max, b.x_max);
  if (y_max <= y_min || x_max <= x_min) return false;
  const float area_a = (a.y_max - a.y_min) * (a.x_max - a.x_min);
  const float area_b = (b.y_max - b.y_min) * (b.x_max - b.x_min);
  if (area_a <= 0 || area_b <= 0) return false;
  const float intersection = (y_max - y_min) * (x_max - x_min);
  const float union_area = area_a + area_b - intersection;
  if (union_area <= 0) return false;
  return intersection / union_area > threshold;
}

class NonMaxSuppressionKernel final : public OpKernel {
 public:
  NonMaxSuppressionKernel(int64_t batches, int64_t classes, int64_t spatial, bool center)
      : batches_(batches), classes_(classes), spatial_(spatial), center_(center) {}

  absl::Status Run(const RunContext& ctx) override {
    BRIGADE_CHECK(ctx.dynamic_shape != nullptr, "a dynamic-output kernel runs with dynamic_shape");
    const auto given = [&ctx](size_t i) {
      return i < ctx.inputs.size() && ctx.inputs[i] != nullptr;
    };
    int64_t max_boxes = 0;
    if (given(2)) max_boxes = *ctx.in<int64_t>(2);
    if (max_boxes < 0) {
      return absl::InvalidArgumentError(
          StrCat("input 'max_output_boxes_per_class' is ", max_boxes, "; it must be >= 0"));
    }
    const float iou_threshold = given(3) ? *ctx.in<float>(3) : 0.0f;
    if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
      return absl::InvalidArgumentError(
          StrCat("input 'iou_threshold' is ", iou_threshold, "; it must be in [0, 1]"));
    }
    const bool has_score_threshold = given(4);
    const float score_threshold = has_score_threshold ? *ctx.in<float>(4) : 0.0f;
    const float* boxes = ctx.in<float>(0);
    const float* scores = ctx.in<float>(1);
    int64_t* out = ctx.out<int64_t>(0);
    // Scratch: the candidates of one (batch, class), then the boxes kept for it.
    auto* candidates = reinterpret_cast<int32_t*>(ctx.scratch);
    auto* kept = candidates + spatial_;
    const int64_t per_class = std::min(max_boxes, spatial_);
    int64_t rows = 0;
    for (int64_t b = 0; b < batches_ && per_class > 0; ++b) {
      const float* batch_boxes = boxes + b * spatial_ * 4;
      for (int64_t c = 0; c < classes_; ++c) {
        const float* s = scores + (b * classes_ + c) * spatial_;
        int64_t n = 0;
        for (int64_t i = 0; i < spatial_; ++i) {
          if (std::isnan(s[i]) || (has_score_threshold && !(s[i] > score_threshold))) continue;
          candidates[n++] = static_cast<int32_t>(i);
        }
        // Descending score; the lower index first among equals (the reference's order).
        std::sort(candidates, candidates + n,
                  [s](int32_t x, int32_t y) { return s[x] > s[y] || (s[x] == s[y] && x < y); });
        int64_t num_kept = 0;
        for (int64_t k = 0; k < n && num_kept < per_class; ++k) {
          const Box box = ReadBox(batch_boxes + int64_t{candidates[k]} * 4, center_);
          bool suppressed = false;
          for (int64_t j = 0; j < num_kept && !suppressed; ++j) {
            suppressed = Suppresses(ReadBox(batch_boxes + int64_t{kept[j]} * 4, center_), box,
                                    iou_threshold);
          }
          if (suppressed) continue;
          kept[num_kept++] = candidates[k];
          out[rows * 3] = b;
          out[rows * 3 + 1] = c;
          out[rows * 3 + 2] = candidates[k];
          ++rows;
        }
      }
    }
    *ctx.dynamic_shape = Shape{rows, 3};
    return absl::OkStatus();
  }

 private:
  const int64_t batches_, classes_, spatial_;
  const bool center_;
};

// Input `i`, when given, must hold one value of `dtype`.
absl::Status CheckScalarInput(const KernelContext& ctx, size_t i, const char* name,
                              DataType dtype) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const ValueInfo& v = ctx.input(i);
  if (v.dtype != dtype) {
    return ctx.Error("input '", name, "' must be ", DataTypeName(dtype), ", not ",
                     DataTypeName(v.dtype));
  }
  if (v.shape.size() > 1 || v.num_elements() != 1) {
    return ctx.Error("input '", name, "' must hold one value, not shape ", ShapeToString(v.shape));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateNonMaxSuppression(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("needs 'boxes' and 'scores'");
  const ValueInfo& boxes = ctx.input(0);
  const ValueInfo& scores = ctx.input(1);
  if (boxes.dtype != DataType::kFp32 || scores.dtype != DataType::kFp32) {
    return ctx.Unsupported("'boxes' and 'scores' must be float, not ", DataTypeName(boxes.dtype),
                           " and ", DataTypeName(scores.dtype));
  }
  if (boxes.shape.size() != 3 || boxes.shape[2] != 4) {
    return ctx.Error("input 'boxes' must have shape [batches, boxes, 4], not ",
                     ShapeToString(boxes.shape));
  }
  if (scores.shape.size() != 3) {
    return ctx.Error("input 'scores' must have shape [batches, classes, boxes], not ",
                     ShapeToString(scores.shape));
  }
  if (boxes.shape[0] != scores.shape[0] || boxes.shape[1] != scores.shape[2]) {
    return ctx.Error("input 'boxes' ", ShapeToString(boxes.shape), " and 'scores' ",
                     ShapeToString(scores.shape), " disagree on the batches or boxes");
  }
  BRIGADE_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "max_output_boxes_per_class", DataType::kInt64));
  BRIGADE_RETURN_IF_ERROR(CheckScalarInput(ctx, 3, "iou_threshold", DataType::kFp32));
  BRIGADE_RETURN_IF_ERROR(CheckScalarInput(ctx, 4, "score_threshold", DataType::kFp32));
  const int64_t center = ctx.node->attributes.GetInt("center_point_box", 0);
  if (center != 0 && center != 1) {
    return ctx.Error("attribute 'center_point_box' must be 0 or 1, not ", center);
  }
  const int64_t batches = scores.shape[0], classes = scores.shape[1], spatial = scores.shape[2];
  // Box indices and the scratch use int32; the scores tensor itself bounds B·C·S.
  if (spatial > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("input 'boxes' has ", spatial, " boxes per batch, over 2^31 - 1");
  }
  int64_t per_class = spatial;
  if (ctx.has_input(2) && ctx.input(2).constant != nullptr) {
    BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> max_boxes, ConstantInts(ctx, 2));
    if (max_boxes[0] < 0) {
      return ctx.Error("input 'max_output_boxes_per_class' is ", max_boxes[0], "; it must be >= 0");
    }
    per_class = std::min(per_class, max_boxes[0]);
  }
  // Each (batch, class) keeps at most per_class boxes: B·C·per_class <= B·C·S, the number of
  // scores, which fit in memory; CheckOutputSizes bounds the bytes.
  const int64_t rows = scores.num_elements() / std::max<int64_t>(spatial, 1) * per_class;
  ctx.SetOutput(0, DataType::kInt64, Shape{rows, 3});
  ctx.scratch_bytes = 2 * static_cast<size_t>(spatial) * sizeof(int32_t);
  return std::make_unique<NonMaxSuppressionKernel>(batches, classes, spatial, center == 1);
}

}  // namespace

void RegisterNonMaxSuppressionKernel(KernelRegistry* registry) {
  KernelDef def;
  def.op_type = "NonMaxSuppression";
  def.since_version = 10;
  def.create = &CreateNonMaxSuppression;
  def.foldable = false;
  def.dynamic_output = true;
  registry->Add(def);
}

}  // namespace brigade::engine::onnx
