#include "engine/onnx/kernels/post_ops.h"

#include <limits>
#include <string>

#include "core/status_macros.h"
#include "engine/onnx/kernels/dnnl_util.h"

namespace brigade::engine::onnx {

void AppendPostOp(Node* fused, std::string_view op, float alpha, float beta) {
  std::vector<std::string> ops(fused->attributes.GetStrings("post_ops").begin(),
                               fused->attributes.GetStrings("post_ops").end());
  std::vector<float> alphas(fused->attributes.GetFloats("post_op_alpha").begin(),
                            fused->attributes.GetFloats("post_op_alpha").end());
  std::vector<float> betas(fused->attributes.GetFloats("post_op_beta").begin(),
                           fused->attributes.GetFloats("post_op_beta").end());
  ops.emplace_back(op);
  alphas.push_back(alpha);
  betas.push_back(beta);
  fused->attributes.SetStrings("post_ops", std::move(ops));
  fused->attributes.SetFloats("post_op_alpha", std::move(alphas));
  fused->attributes.SetFloats("post_op_beta", std::move(betas));
}

size_t PostOpCount(const Node& node) { return node.attributes.GetStrings("post_ops").size(); }

absl::Status AppendNodePostOps(const KernelContext& ctx, const dnnl::memory::desc& dst,
                               dnnl::post_ops* ops, std::vector<BinaryPostOpInput>* binary_inputs,
                               int* sum_input) {
  const AttributeMap& attrs = ctx.node->attributes;
  const auto names = attrs.GetStrings("post_ops");
  const auto alphas = attrs.GetFloats("post_op_alpha");
  const auto betas = attrs.GetFloats("post_op_beta");
  if (alphas.size() != names.size() || betas.size() != names.size()) {
    return ctx.Error("post_ops, post_op_alpha and post_op_beta differ in length");
  }
  auto next_input = static_cast<size_t>(attrs.GetInt("post_op_input", 0));
  dnnl::post_ops& post_ops = *ops;
  using alg = dnnl::algorithm;
  const dnnl::memory::dims dst_dims = dst.dims();
  if (sum_input != nullptr) *sum_input = -1;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& op = names[i];
    const float alpha = alphas[i], beta = betas[i];
    if (op == "Relu") {
      post_ops.append_eltwise(1.0f, alg::eltwise_relu, 0, 0);
    } else if (op == "LeakyRelu") {
      post_ops.append_eltwise(1.0f, alg::eltwise_relu, alpha, 0);
    } else if (op == "Clip") {
      post_ops.append_eltwise(1.0f, alg::eltwise_clip, alpha, beta);
    } else if (op == "Sigmoid") {
      post_ops.append_eltwise(1.0f, alg::eltwise_logistic, 0, 0);
    } else if (op == "Tanh") {
      post_ops.append_eltwise(1.0f, alg::eltwise_tanh, 0, 0);
    } else if (op == "HardSwish") {
      post_ops.append_eltwise(1.0f, alg::eltwise_hardswish, 0, 0);
    } else if (op == "HardSigmoid") {
      post_ops.append_eltwise(1.0f, alg::eltwise_linear, alpha, beta);
      post_ops.append_eltwise(1.0f, alg::eltwise_clip, 0.0f, 1.0f);
    } else if (op == "Swish") {
      post_ops.append_eltwise(1.0f, alg::eltwise_swish, 1.0f, 0);
    } else if (op == "Gelu") {
      post_ops.append_eltwise(1.0f, alg::eltwise_gelu_erf, 0, 0);
    } else if (op == "Linear") {
      post_ops.append_eltwise(1.0f, alg::eltwise_linear, alpha, beta);
    } else if (op == "Add" || op == "Mul") {
      if (!ctx.has_input(next_input)) {
        return ctx.Error("post-op ", op, " has no input ", next_input);
      }
      const ValueInfo& extra = ctx.input(next_input);
      dnnl::memory::desc desc, current;
      if (extra.layout.blocked) {
        if (extra.layout.desc.dims() != dst_dims) {
          return ctx.Error("blocked post-op input does not match the output");
        }
        current = extra.layout.desc;
        desc = dst;
      } else {
        if (extra.shape.size() > dst_dims.size()) {
          return ctx.Error("post-op input rank exceeds the output's");
        }
        Shape aligned(dst_dims.size() - extra.shape.size(), 1);
        aligned.insert(aligned.end(), extra.shape.begin(), extra.shape.end());
        for (size_t d = 0; d < aligned.size(); ++d) {
          if (aligned[d] != 1 && aligned[d] != dst_dims[d]) {
            return ctx.Error("post-op input ", ShapeToString(extra.shape),
                             " does not broadcast to the output");
          }
        }
        const auto type = ToDnnlType(extra.dtype);
        if (!type.has_value()) return ctx.Error("post-op input type unsupported");
        current = PlainDesc(aligned, *type);
        const bool full = aligned == Shape(dst_dims.begin(), dst_dims.end());
        // A full-size input is read in the output's layout; a broadcast one stays plain.
        desc = full ? dst : current;
      }
      if (op == "Add" && sum_input != nullptr && *sum_input < 0 && current == dst &&
          extra.dtype == DataType::kFp32 && ctx.input_reusable(next_input)) {
        // The residual is already where the output goes: add it from there.
        post_ops.append_sum(1.0f);
        *sum_input = static_cast<int>(next_input);
        ++next_input;
        continue;
      }
      post_ops.append_binary(op == "Add" ? alg::binary_add : alg::binary_mul, desc);
      binary_inputs->push_back(BinaryPostOpInput{
          next_input, DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_ops.len() - 1) | DNNL_ARG_SRC_1, desc,
          current});
      ++next_input;
    } else {
      return ctx.Error("unknown post-op '", op, "'");
    }
  }
  return absl::OkStatus();
}

}  // namespace brigade::engine::onnx
