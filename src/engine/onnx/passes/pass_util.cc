#include "engine/onnx/passes/pass_util.h"

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {

absl::StatusOr<std::vector<Tensor>> EvaluateNode(const Graph& graph, const Node& node,
                                                 size_t max_bytes) {
  const KernelDef* def = KernelRegistry::Get().Find(node.domain, node.op_type, node.opset);
  if (def == nullptr || !def->foldable) {
    return absl::UnimplementedError(StrCat("no foldable kernel for ", node.op_type));
  }
  static const dnnl::engine* const engine = []() -> const dnnl::engine* {
    try {
      static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
      return &e;
    } catch (const dnnl::error&) {
      return nullptr;
    }
  }();
  if (engine == nullptr) return absl::InternalError("oneDNN CPU engine unavailable");
  std::vector<ValueInfo> infos(node.inputs.size());
  KernelContext ctx;
  ctx.node = &node;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const Tensor* t = ConstantOf(graph, node.inputs[k]);
    if (node.inputs[k] == kNoValue) {
      ctx.inputs.push_back(nullptr);
      continue;
    }
    if (t == nullptr) return absl::InvalidArgumentError("input is not constant");
    infos[k].dtype = t->dtype();
    infos[k].shape = t->shape();
    infos[k].constant = t;
    ctx.inputs.push_back(&infos[k]);
  }
  ctx.outputs.resize(node.outputs.size());
  for (ValueId output : node.outputs) ctx.output_used.push_back(output != kNoValue);
  PackedWeights weights;
  ctx.engine = engine;
  ctx.weights = &weights;
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, def->create(ctx));
  BRIGADE_RETURN_IF_ERROR(CheckOutputSizes(ctx));
  size_t bytes = ctx.scratch_bytes;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] == kNoValue || ctx.outputs[k].dtype == DataType::kInvalid) continue;
    const size_t size = ctx.outputs[k].byte_size();
    if (size > max_bytes || bytes > max_bytes - size) {
      return absl::ResourceExhaustedError(
          StrCat(node.op_type, " results exceed ", max_bytes, " bytes"));
    }
    bytes += size;
  }
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(
        StrCat(node.op_type, " scratch exceeds ", max_bytes, " bytes"));
  }
  std::vector<Tensor> results(node.outputs.size());
  std::vector<std::byte*> out_ptrs(node.outputs.size(), nullptr);
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] == kNoValue || ctx.outputs[k].dtype == DataType::kInvalid) continue;
    if (ctx.outputs[k].layout.blocked) return absl::UnimplementedError("blocked result");
    BRIGADE_ASSIGN_OR_RETURN(results[k],
                             Tensor::Allocate(ctx.outputs[k].dtype, ctx.outputs[k].shape));
    out_ptrs[k] = results[k].mutable_data();
  }
  std::vector<const std::byte*> in_ptrs;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    in_ptrs.push_back(ctx.inputs[k] == nullptr ? nullptr : infos[k].constant->data());
  }
  Tensor scratch;
  if (ctx.scratch_bytes > 0) {
    BRIGADE_ASSIGN_OR_RETURN(
        scratch,
        Tensor::Allocate(DataType::kUint8, Shape{static_cast<int64_t>(ctx.scratch_bytes)}));
  }
  dnnl::stream stream(*engine);
  RunContext run;
  run.inputs = in_ptrs;
  run.outputs = out_ptrs;
  run.scratch = scratch.mutable_data();
  run.stream = &stream;
  run.threads = 1;
  if (!AllOutputsEmpty(ctx)) {
    BRIGADE_RETURN_IF_ERROR(kernel->Run(run));
  }
  return results;
}

const Tensor* ConstantOf(const Graph& graph, ValueId id) {
  if (id == kNoValue) return nullptr;
  const Value& v = graph.value(id);
  return v.constant.has_value() ? &*v.constant : nullptr;
}

std::optional<double> ScalarConstant(const Graph& graph, ValueId id) {
  const Tensor* t = ConstantOf(graph, id);
  if (t == nullptr || t->num_elements() != 1) return std::nullopt;
  if (t->dtype() == DataType::kFp32) return t->values<float>()[0];
  if (t->dtype() == DataType::kFp64) return t->values<double>()[0];
  return std::nullopt;
}

bool IsOp(const Node& node, std::string_view op_type) {
  return !node.removed && node.domain.empty() && node.op_type == op_type;
}

Node* SoleProducer(Graph* graph, const GraphIndex& index, ValueId id, std::string_view op_type) {
  if (id == kNoValue || !index.HasSingleConsumer(id)) return nullptr;
  const int p = index.producer(id);
  if (p < 0) return nullptr;
  Node& node = graph->nodes()[static_cast<size_t>(p)];
  return IsOp(node, op_type) ? &node : nullptr;
}

}  // namespace brigade::engine::onnx
