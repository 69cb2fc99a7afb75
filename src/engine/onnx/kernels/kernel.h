#ifndef BRIGADE_ENGINE_ONNX_KERNELS_KERNEL_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_KERNEL_H_

// The contract between the planner and the op kernels.
//
// A kernel is created for one node and one input-shape signature: its factory receives a
// KernelContext describing the inputs (type, concrete shape, layout, and contents when they are
// known before run time), validates them, states the outputs' types, shapes and layouts, asks for
// scratch memory, and builds whatever it will need at run time (oneDNN primitives, packed
// weights, index tables). Run() then executes it any number of times on buffers the planner
// binds. Everything shape-dependent happens in the factory, so Run() does no allocation.
//
//   factory(KernelContext&) ─► OpKernel ─► Run(RunContext) × N
//
// Errors: factories return INVALID_ARGUMENT naming the node, op and reason (bad attribute, shape
// mismatch, unsupported type); Run() fails only on data-dependent errors (an index out of range).
// Thread safety: a kernel belongs to one instance's plan and runs on one thread at a time; it may
// use `threads` OpenMP/oneDNN threads inside Run().

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/shape.h"
#include "core/strings.h"
#include "core/tensor.h"
#include "engine/onnx/ir/graph.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

class PackedWeights;

// Layout of a value's buffer: plain row-major, or a oneDNN blocked layout (e.g. nChw16c) that a
// convolution-family primitive chose. Blocked buffers may be larger than the plain ones.
struct Layout {
  bool blocked = false;
  dnnl::memory::desc desc;  // meaningful when blocked
};

// What the planner knows about a value when a kernel is prepared.
struct ValueInfo {
  DataType dtype = DataType::kInvalid;
  Shape shape;
  Layout layout;
  // Contents, when known before run time (an initializer, or a result the planner computed
  // from other known values, like a Shape→Gather→Concat chain). Null otherwise.
  const Tensor* constant = nullptr;

  // Saturates at INT64_MAX (and byte_size at SIZE_MAX): a kernel may describe an output from a
  // model's untrusted shapes before the planner refuses it (CheckOutputSizes), and the count must
  // stay defined until then.
  int64_t num_elements() const;
  // Bytes the buffer needs in this layout.
  size_t byte_size() const;
};

// Precision of the multiply-adds in convolutions and matrix products with constant weights.
// kBf16 rounds their fp32 input and weights to bfloat16 and accumulates in fp32 (oneDNN's bf16
// primitives): about twice the multiply rate on CPUs with AVX-512 BF16 or AMX, with ~3
// significant digits per product. Values between ops stay fp32, so every other kernel is
// unchanged. CompiledModel sets it only where the CPU multiplies bf16 natively.
enum class ComputePrecision { kFp32, kBf16 };

struct KernelContext {
  const Node* node = nullptr;
  // One entry per node input; null for omitted optional inputs.
  std::vector<const ValueInfo*> inputs;
  // One entry per node output, filled by the factory. `output_used[i]` is false for omitted
  // optional outputs, which the factory may leave empty.
  std::vector<ValueInfo> outputs;
  std::vector<bool> output_used;
  // Bytes of per-run scratch the kernel wants; bound to RunContext::scratch.
  size_t scratch_bytes = 0;
  // Intra-op threads the kernel may use.
  int threads = 1;
  ComputePrecision precision = ComputePrecision::kFp32;
  const dnnl::engine* engine = nullptr;
  // Packed constants shared by every plan and instance of the model.
  PackedWeights* weights = nullptr;
  // PackConstant calls given a released source (null data, CompiledModel::ReleaseSource): the
  // planner checks that each released input of the node was packed, and rebuilds the source
  // for the node otherwise.
  int released_sources_packed = 0;
  // The planner only wants the outputs described (static shape inference): factories of
  // expensive kernels may return a null kernel right after describing their outputs.
  bool shape_only = false;
  // In-place offer: bit i set when this node is the last reader of input i and its buffer is the
  // engine's own (an arena intermediate, no other value sharing it). The factory may take one
  // such input's buffer for output 0 by setting `output_reuses_input` to i; output 0 must then
  // have the input's type, shape and layout, and Run() finds both pointing at the same memory
  // (the input's contents are there when Run() starts). A convolution uses this to add a
  // residual with oneDNN's `sum` post-op.
  uint32_t reusable_inputs = 0;
  int output_reuses_input = -1;

  bool input_reusable(size_t i) const { return i < 32 && (reusable_inputs >> i) & 1u; }

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const ValueInfo& input(size_t i) const { return *inputs[i]; }
  void SetOutput(size_t i, DataType dtype, Shape shape) {
    outputs[i].dtype = dtype;
    outputs[i].shape = std::move(shape);
    outputs[i].layout = Layout{};
  }

  // INVALID_ARGUMENT "node 'name' (Op): <reason>".
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(
        StrCat("node '", node->name, "' (", node->op_type, "): ", args...));
  }
  // UNIMPLEMENTED with the same prefix, for valid models using what the engine lacks.
  template <typename... Args>
  absl::Status Unsupported(const Args&... args) const {
    return absl::UnimplementedError(
        StrCat("node '", node->name, "' (", node->op_type, "): ", args...));
  }
};

struct RunContext {
  // Buffers in node input/output order; null for omitted ones. Inputs are read-only, except
  // the one output 0 took in place (KernelContext::output_reuses_input), which is output 0.
  std::span<const std::byte* const> inputs;
  std::span<std::byte* const> outputs;
  std::byte* scratch = nullptr;
  dnnl::stream* stream = nullptr;
  int threads = 1;
  // Set only for a kernel whose KernelDef has `dynamic_output`: Run() stores output 0's actual
  // shape here, at most as many elements as the factory described (the buffer's capacity).
  Shape* dynamic_shape = nullptr;

  template <typename T>
  const T* in(size_t i) const {
    return reinterpret_cast<const T*>(inputs[i]);
  }
  template <typename T>
  T* out(size_t i) const {
    return reinterpret_cast<T*>(outputs[i]);
  }
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual absl::Status Run(const RunContext& ctx) = 0;
};

using KernelFactory = absl::StatusOr<std::unique_ptr<OpKernel>> (*)(KernelContext& ctx);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_KERNEL_H_
