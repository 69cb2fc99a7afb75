// Ops that only reinterpret or describe shapes: Reshape, Flatten, Squeeze, Unsqueeze, Identity,
// Dropout (inference), Shape, Size, ConstantOfShape, Range.
//
// The view ops declare alias_input 0: the planner lets their output share the input's buffer, and
// Run() copies only when it was given a separate output (a graph output needs its own tensor).

#include <cmath>
#include <cstring>
#include <memory>

#include "core/status_macros.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

class ViewKernel final : public OpKernel {
 public:
  explicit ViewKernel(size_t bytes) : bytes_(bytes) {}
  absl::Status Run(const RunContext& ctx) override {
    ParallelCopy(ctx.threads, ctx.outputs[0], ctx.inputs[0], bytes_);
    return absl::OkStatus();
  }

 private:
  const size_t bytes_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> MakeView(KernelContext& ctx, Shape shape) {
  const ValueInfo& x = ctx.input(0);
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error("negative dimension in output shape ", ShapeToString(shape));
    count *= d;
  }
  if (count != x.num_elements()) {
    return ctx.Error("cannot view ", ShapeToString(x.shape), " (", x.num_elements(),
                     " elements) as ", ShapeToString(shape));
  }
  ctx.SetOutput(0, x.dtype, std::move(shape));
  return std::make_unique<ViewKernel>(static_cast<size_t>(count) * DataTypeSize(x.dtype));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateReshape(KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> spec, ConstantInts(ctx, 1));
  const bool allow_zero = ctx.node->attributes.GetInt("allowzero", 0) != 0;
  Shape out;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) return ctx.Error("shape entry ", i, " copies a missing input dim");
      d = in[i];
    }
    if (d == -1) {
      if (infer >= 0) return ctx.Error("shape has more than one -1");
      infer = static_cast<int>(i);
      out.push_back(1);
      continue;
    }
    if (d < 0) return ctx.Error("invalid shape entry ", d);
    out.push_back(d);
  }
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, out));  // bounds `known` below
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int>(i) != infer) known *= out[i];
  }
  if (infer >= 0) {
    const int64_t total = ctx.input(0).num_elements();
    if (known == 0 || total % known != 0) {
      return ctx.Error("cannot infer the -1 dimension reshaping ", ShapeToString(in), " to ",
                       fmt::format("[{}]", fmt::join(spec, ",")));
    }
    out[static_cast<size_t>(infer)] = total / known;
  }
  return MakeView(ctx, std::move(out));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateFlatten(KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node->attributes.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return ctx.Error("axis out of range for rank ", rank);
  const auto a = static_cast<size_t>(axis);
  return MakeView(ctx, Shape{DimProduct(in, 0, a), DimProduct(in, a, in.size())});
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateSqueeze(KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (ctx.has_input(1)) {
    BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstantInts(ctx, 1));
    for (int64_t axis : axes) {
      BRIGADE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(ctx, axis, rank));
      if (in[static_cast<size_t>(a)] != 1) {
        return ctx.Error("cannot squeeze axis ", axis, " of size ", in[static_cast<size_t>(a)]);
      }
      drop[static_cast<size_t>(a)] = true;
    }
  } else {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return MakeView(ctx, std::move(out));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateUnsqueeze(KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstantInts(ctx, 1));
  const auto rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    BRIGADE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(ctx, axis, rank));
    if (inserted[static_cast<size_t>(a)]) return ctx.Error("axis ", axis, " repeated");
    inserted[static_cast<size_t>(a)] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    out.push_back(inserted[static_cast<size_t>(i)] ? 1 : in[next++]);
  }
  return MakeView(ctx, std::move(out));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateIdentity(KernelContext& ctx) {
  if (ctx.input(0).dtype == DataType::kBytes) return ctx.Unsupported("string tensors");
  return MakeView(ctx, ctx.input(0).shape);
}

// Dropout at inference (or in training mode at ratio 0) is the identity; its optional mask output
// is all true.
class DropoutKernel final : public OpKernel {
 public:
  DropoutKernel(size_t bytes, int64_t mask_count) : bytes_(bytes), mask_count_(mask_count) {}
  absl::Status Run(const RunContext& ctx) override {
    ParallelCopy(ctx.threads, ctx.outputs[0], ctx.inputs[0], bytes_);
    if (ctx.outputs.size() > 1 && ctx.outputs[1] != nullptr) {
      std::memset(ctx.outputs[1], 1, static_cast<size_t>(mask_count_));
    }
    return absl::OkStatus();
  }

 private:
  const size_t bytes_;
  const int64_t mask_count_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateDropout(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (ctx.has_input(2) && ctx.input(2).constant != nullptr) {
    BRIGADE_ASSIGN_OR_RETURN(double training, ConstantScalar(ctx, 2));
    // Training mode drops each element with probability `ratio` (default 0.5): random masks,
    // which an inference engine does not draw. At ratio 0 it drops nothing and scales by 1, the
    // identity with an all-true mask, and exporters write exactly that for modules whose dropout
    // is 0 but that were traced with training=True (torchvision's Swin-T attention, 24 nodes).
    if (training != 0) {
      double ratio = 0.5;
      if (ctx.has_input(1)) {
        if (ctx.input(1).constant == nullptr) {
          return ctx.Unsupported("training mode with a ratio known only at run time");
        }
        BRIGADE_ASSIGN_OR_RETURN(ratio, ConstantScalar(ctx, 1));
      }
      if (ratio != 0) return ctx.Unsupported("training mode with ratio ", ratio, " (random masks)");
    }
  } else if (ctx.has_input(2)) {
    return ctx.Unsupported("training_mode must be known before run time");
  }
  ctx.SetOutput(0, x.dtype, x.shape);
  if (ctx.outputs.size() > 1 && ctx.output_used[1]) ctx.SetOutput(1, DataType::kBool, x.shape);
  return std::make_unique<DropoutKernel>(x.byte_size(), x.num_elements());
}

// Writes a fixed byte string computed at plan time (Shape, Size).
class FixedOutputKernel final : public OpKernel {
 public:
  explicit FixedOutputKernel(std::vector<int64_t> values) : values_(std::move(values)) {}
  absl::Status Run(const RunContext& ctx) override {
    std::memcpy(ctx.outputs[0], values_.data(), values_.size() * sizeof(int64_t));
    return absl::OkStatus();
  }

 private:
  const std::vector<int64_t> values_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateShape(KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(in.size());
  int64_t start = ctx.node->attributes.GetInt("start", 0);
  int64_t end = ctx.node->attributes.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> values;
  for (int64_t i = start; i < end; ++i) values.push_back(in[static_cast<size_t>(i)]);
  ctx.SetOutput(0, DataType::kInt64, Shape{static_cast<int64_t>(values.size())});
  return std::make_unique<FixedOutputKernel>(std::move(values));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateSize(KernelContext& ctx) {
  ctx.SetOutput(0, DataType::kInt64, Shape{});
  return std::make_unique<FixedOutputKernel>(std::vector<int64_t>{ctx.input(0).num_elements()});
}

// Fills the output with copies of one element.
class FillKernel final : public OpKernel {
 public:
  FillKernel(std::vector<std::byte> element, int64_t count)
      : element_(std::move(element)), count_(count) {}
  absl::Status Run(const RunContext& ctx) override {
    const size_t size = element_.size();
    std::byte* out = ctx.outputs[0];
    ParallelFor(ctx.threads, count_, 1 << 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        std::memcpy(out + static_cast<size_t>(i) * size, element_.data(), size);
      }
    });
    return absl::OkStatus();
  }

 private:
  const std::vector<std::byte> element_;
  const int64_t count_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateConstantOfShape(KernelContext& ctx) {
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstantInts(ctx, 0));
  Shape shape;
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("negative dimension ", d);
    shape.push_back(d);
  }
  auto count = ElementCount(shape);
  if (!count.ok()) return ctx.Error(count.status().message());
  DataType dtype = DataType::kFp32;
  std::vector<std::byte> element(sizeof(float), std::byte{0});
  if (const Tensor* value = ctx.node->attributes.GetTensor("value")) {
    if (value->num_elements() != 1 || DataTypeSize(value->dtype()) == 0) {
      return ctx.Error("value must be a one-element numeric tensor");
    }
    dtype = value->dtype();
    element.assign(value->data(), value->data() + value->byte_size());
  }
  ctx.SetOutput(0, dtype, std::move(shape));
  return std::make_unique<FillKernel>(std::move(element), *count);
}

class RangeKernel final : public OpKernel {
 public:
  RangeKernel(DataType dtype, double start, double delta, int64_t count)
      : dtype_(dtype), start_(start), delta_(delta), count_(count) {}
  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      T* out = ctx.out<T>(0);
      if constexpr (std::is_floating_point_v<T>) {
        // Accumulate as ONNX's reference does (start + i*delta in the output type).
        const T start = static_cast<T>(start_), delta = static_cast<T>(delta_);
        for (int64_t i = 0; i < count_; ++i) out[i] = start + static_cast<T>(i) * delta;
      } else {
        for (int64_t i = 0; i < count_; ++i) {
          out[i] = static_cast<T>(static_cast<int64_t>(start_) + i * static_cast<int64_t>(delta_));
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const DataType dtype_;
  const double start_, delta_;
  const int64_t count_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateRange(KernelContext& ctx) {
  const DataType dtype = ctx.input(0).dtype;
  if (dtype == DataType::kBool || !VisitNumeric(dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(dtype));
  }
  BRIGADE_ASSIGN_OR_RETURN(double start, ConstantScalar(ctx, 0));
  BRIGADE_ASSIGN_OR_RETURN(double limit, ConstantScalar(ctx, 1));
  BRIGADE_ASSIGN_OR_RETURN(double delta, ConstantScalar(ctx, 2));
  if (delta == 0) return ctx.Error("delta is zero");
  const double steps = std::ceil((limit - start) / delta);
  if (!(steps < 1e12)) return ctx.Error("range is too long");
  const int64_t count = steps > 0 ? static_cast<int64_t>(steps) : 0;
  ctx.SetOutput(0, dtype, Shape{count});
  return std::make_unique<RangeKernel>(dtype, start, delta, count);
}

}  // namespace

void RegisterShapeKernels(KernelRegistry* registry) {
  auto add = [&](std::string op, KernelFactory create, uint32_t values, int alias) {
    KernelDef def;
    def.op_type = std::move(op);
    def.create = create;
    def.value_inputs = values;
    def.alias_input = alias;
    if (def.op_type == "Shape" || def.op_type == "Size") {
      def.reads_input_data = false;
      def.blocked_inputs = Inputs({0});
    }
    registry->Add(std::move(def));
  };
  add("Reshape", &CreateReshape, Inputs({1}), 0);
  add("Flatten", &CreateFlatten, 0, 0);
  add("Squeeze", &CreateSqueeze, Inputs({1}), 0);
  add("Unsqueeze", &CreateUnsqueeze, Inputs({1}), 0);
  add("Identity", &CreateIdentity, 0, 0);
  add("Dropout", &CreateDropout, Inputs({2}), -1);
  add("Shape", &CreateShape, 0, -1);
  add("Size", &CreateSize, 0, -1);
  add("ConstantOfShape", &CreateConstantOfShape, Inputs({0}), -1);
  add("Range", &CreateRange, Inputs({0, 1, 2}), -1);
}

}  // namespace brigade::engine::onnx
