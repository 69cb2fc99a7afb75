#include "optimize/quantizer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <unordered_map>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/loader/tensor_proto.h"

namespace brigade::optimize {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

int DefaultOpset(const ModelProto& model) {
  for (const auto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") {
      return static_cast<int>(import.version());
    }
  }
  return 0;
}

int64_t IntAttribute(const NodeProto& node, const std::string& name, int64_t fallback) {
  for (const AttributeProto& a : node.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

float FloatAttribute(const NodeProto& node, const std::string& name, float fallback) {
  for (const AttributeProto& a : node.attribute()) {
    if (a.name() == name) return a.f();
  }
  return fallback;
}

void SetIntAttribute(NodeProto* node, const std::string& name, int64_t value) {
  AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(value);
}

// Where a quantizable node's weight is and along which axis its output channels run.
struct Candidate {
  int node_index = 0;
  std::string weight;      // initializer name
  int axis = 0;            // output-channel axis of the stored weight
  bool transpose = false;  // Gemm transB=0 stores [K, N]; dynamic mode wants [K, N]
};

class Rewriter {
 public:
  Rewriter(const ModelProto& model, const QuantizeOptions& options, const RangeMap& ranges,
           const std::string& model_dir)
      : options_(options), ranges_(ranges), model_dir_(model_dir) {
    result_.model = model;
    opset_ = DefaultOpset(model);
    const GraphProto& g = result_.model.graph();
    for (int i = 0; i < g.initializer_size(); ++i) initializers_[g.initializer(i).name()] = i;
    for (const auto& out : g.output()) graph_outputs_.insert(out.name());
    for (const NodeProto& node : g.node()) {
      for (const std::string& in : node.input()) ++uses_[in];
    }
  }

  // The candidates of the model (eligible or not), with decisions recorded for the ineligible.
  std::vector<Candidate> Scan() {
    std::vector<Candidate> eligible;
    const GraphProto& g = result_.model.graph();
    const bool dynamic = options_.mode == QuantMode::kDynamic;
    for (int i = 0; i < g.node_size(); ++i) {
      const NodeProto& node = g.node(i);
      const std::string& op = node.op_type();
      const bool known_domain = node.domain().empty() || node.domain() == "ai.onnx";
      const bool matmul_like = op == "MatMul" || op == "Gemm";
      if (!known_domain || (!matmul_like && op != "Conv")) {
        if (!IsQdqOp(op)) ++result_.other_ops[known_domain ? op : StrCat(node.domain(), ".", op)];
        continue;
      }
      NodeDecision d{node.name(), op, false, ""};
      Candidate c;
      c.node_index = i;
      d.reason = Eligibility(node, &c);
      if (d.reason.empty() && dynamic && op == "Conv") {
        d.reason = "dynamic mode quantizes MatMul and Gemm only";
      }
      if (d.reason.empty() && Contains(options_.exclude_op_types, op)) {
        d.reason = "excluded by op type";
      }
      if (d.reason.empty() && Contains(options_.exclude_nodes, node.name())) {
        d.reason = "excluded by name";
      }
      if (d.reason.empty() && !options_.only_nodes.empty() &&
          !Contains(options_.only_nodes, node.name())) {
        d.reason = "not selected";
      }
      if (d.reason.empty() && !dynamic) {
        if (!ranges_.contains(node.input(0))) {
          d.reason = StrCat("no calibrated range for input '", node.input(0), "'");
        }
      }
      d.quantized = d.reason.empty();
      decision_index_[i] = result_.decisions.size();
      result_.decisions.push_back(d);
      if (d.quantized) eligible.push_back(c);
    }
    return eligible;
  }

  // Static QDQ: the activation tensors to quantize for `eligible` (inputs and outputs).
  std::vector<std::string> ActivationTensors(const std::vector<Candidate>& eligible) const {
    std::vector<std::string> tensors;
    std::set<std::string> seen;
    auto add = [&](const std::string& name) {
      if (!name.empty() && !graph_outputs_.contains(name) && seen.insert(name).second) {
        tensors.push_back(name);
      }
    };
    for (const Candidate& c : eligible) {
      const NodeProto& node = result_.model.graph().node(c.node_index);
      add(node.input(0));
      add(OutputAfterActivation(node));
    }
    return tensors;
  }

  absl::StatusOr<QuantizeResult> Run() {
    if (opset_ < 10) {
      return absl::InvalidArgumentError(
          StrCat("model imports ONNX opset ", opset_,
                 ": quantization needs opset >= 10 (QuantizeLinear)"));
    }
    if (options_.mode == QuantMode::kDynamic && opset_ < 11) {
      return absl::InvalidArgumentError(StrCat("model imports ONNX opset ", opset_,
                                               ": dynamic quantization needs opset >= 11 "
                                               "(DynamicQuantizeLinear)"));
    }
    per_channel_ = options_.per_channel;
    if (per_channel_ && opset_ < 13) {
      per_channel_ = false;
      result_.notes.push_back(StrCat("per-channel weights need opset >= 13 (model: ", opset_,
                                     "); weights are per tensor"));
    }
    std::vector<Candidate> eligible = Scan();
    GraphProto* g = result_.model.mutable_graph();
    std::vector<std::vector<NodeProto>> prefix(static_cast<size_t>(g->node_size()) + 1);
    std::vector<std::vector<NodeProto>> suffix(static_cast<size_t>(g->node_size()));
    std::vector<bool> drop(static_cast<size_t>(g->node_size()), false);

    if (options_.mode == QuantMode::kStatic) {
      // Quantize/dequantize each activation once, right after it is produced.
      std::map<std::string, std::string> dequantized;  // tensor -> its DequantizeLinear output
      std::map<std::string, int> producer;
      for (int i = 0; i < g->node_size(); ++i) {
        for (const std::string& out : g->node(i).output()) producer[out] = i;
      }
      for (const std::string& t : ActivationTensors(eligible)) {
        const auto range = ranges_.find(t);
        if (range == ranges_.end()) continue;
        const QuantParams p = ActivationParams(range->second);
        const std::string scale = AddScalarFloat(StrCat(t, "_scale"), p.scale);
        const std::string zp = AddScalarUint8(StrCat(t, "_zero_point"), p.zero_point);
        NodeProto q;
        q.set_op_type("QuantizeLinear");
        q.set_name(StrCat(t, "_QuantizeLinear"));
        q.add_input(t);
        q.add_input(scale);
        q.add_input(zp);
        q.add_output(StrCat(t, "_quantized"));
        NodeProto dq;
        dq.set_op_type("DequantizeLinear");
        dq.set_name(StrCat(t, "_DequantizeLinear"));
        dq.add_input(q.output(0));
        dq.add_input(scale);
        dq.add_input(zp);
        dq.add_output(StrCat(t, "_dequantized"));
        dequantized[t] = dq.output(0);
        original_of_[dq.output(0)] = t;
        activation_params_[t] = p;
        auto& where = producer.contains(t) ? suffix[static_cast<size_t>(producer[t])] : prefix[0];
        where.push_back(std::move(q));
        where.push_back(std::move(dq));
      }
      // Every reader of a quantized activation reads its dequantized copy instead.
      for (int i = 0; i < g->node_size(); ++i) {
        NodeProto* node = g->mutable_node(i);
        for (int k = 0; k < node->input_size(); ++k) {
          const auto it = dequantized.find(node->input(k));
          if (it != dequantized.end()) node->set_input(k, it->second);
        }
      }
      for (const Candidate& c : eligible) {
        BRIGADE_RETURN_IF_ERROR(QuantizeStaticNode(c, &prefix[static_cast<size_t>(c.node_index)]));
      }
    } else {
      std::map<std::string, std::array<std::string, 3>> quantized_inputs;
      for (const Candidate& c : eligible) {
        BRIGADE_RETURN_IF_ERROR(
            QuantizeDynamicNode(c, &quantized_inputs, &prefix[static_cast<size_t>(c.node_index)]));
        drop[static_cast<size_t>(c.node_index)] = true;
      }
    }

    // Rebuild the node list in order: inserted nodes keep it topological.
    std::vector<NodeProto> nodes;
    for (int i = 0; i < g->node_size(); ++i) {
      for (NodeProto& n : prefix[static_cast<size_t>(i)]) nodes.push_back(std::move(n));
      if (!drop[static_cast<size_t>(i)]) nodes.push_back(g->node(i));
      for (NodeProto& n : suffix[static_cast<size_t>(i)]) nodes.push_back(std::move(n));
    }
    g->clear_node();
    for (NodeProto& n : nodes) *g->add_node() = std::move(n);
    DropUnusedInitializers();
    return std::move(result_);
  }

 private:
  static bool IsQdqOp(const std::string& op) {
    return op == "QuantizeLinear" || op == "DequantizeLinear" || op == "DynamicQuantizeLinear";
  }

  // Empty when `node` can be quantized; else why not. Fills the weight and its axis.
  std::string Eligibility(const NodeProto& node, Candidate* c) const {
    const std::string& op = node.op_type();
    if (node.input_size() < 2) return "fewer than two inputs";
    const auto w = initializers_.find(node.input(1));
    if (w == initializers_.end()) return "weights are not a constant initializer";
    const TensorProto& wp = result_.model.graph().initializer(w->second);
    if (wp.data_type() != TensorProto::FLOAT) return "weights are not fp32";
    c->weight = node.input(1);
    if (op == "Conv") {
      if (wp.dims_size() < 3) return "Conv weights of rank < 3";
      c->axis = 0;
      return "";
    }
    if (wp.dims_size() != 2) return "weights are not 2-D";
    if (op == "MatMul") {
      c->axis = 1;
      return "";
    }
    // Gemm: y = alpha · A' · B' + beta · C.
    if (IntAttribute(node, "transA", 0) != 0) return "Gemm with transA=1";
    const bool trans_b = IntAttribute(node, "transB", 0) != 0;
    c->axis = trans_b ? 0 : 1;
    c->transpose = trans_b;
    if (node.input_size() > 2 && !node.input(2).empty() &&
        FloatAttribute(node, "beta", 1.0f) != 1.0f && !initializers_.contains(node.input(2))) {
      return "Gemm with beta != 1 and a non-constant C";
    }
    return "";
  }

  // The tensor a runtime would requantize after `node`: its output, or the output of the Relu
  // or Clip (MobileNet's ReLU6) that alone reads it, which the engine fuses into the int8 op.
  std::string OutputAfterActivation(const NodeProto& node) const {
    const std::string& out = node.output(0);
    const auto uses = uses_.find(out);
    if (uses == uses_.end() || uses->second != 1 || graph_outputs_.contains(out)) return out;
    for (const NodeProto& n : result_.model.graph().node()) {
      if ((n.op_type() == "Relu" || n.op_type() == "Clip") && n.input_size() >= 1 &&
          n.input(0) == out) {
        return n.output(0);
      }
    }
    return out;
  }

  std::string UniqueName(const std::string& hint) {
    std::string name = hint;
    while (initializers_.contains(name) || taken_.contains(name)) {
      name = StrCat(hint, "_", ++counter_);
    }
    taken_.insert(name);
    return name;
  }

  std::string AddInitializer(const std::string& hint, const Tensor& tensor) {
    std::string name = UniqueName(hint);
    engine::onnx::TensorToProto(tensor, name, result_.model.mutable_graph()->add_initializer());
    return name;
  }

  std::string AddScalarFloat(const std::string& hint, float v) {
    return AddInitializer(hint, *Tensor::FromValues<float>(Shape{}, std::span<const float>(&v, 1)));
  }
  std::string AddScalarUint8(const std::string& hint, int v) {
    const uint8_t b = static_cast<uint8_t>(v);
    return AddInitializer(hint,
                          *Tensor::FromValues<uint8_t>(Shape{}, std::span<const uint8_t>(&b, 1)));
  }

  // Symmetric int8 weights along `axis` (per channel) or per tensor; `transpose` stores a 2-D
  // [N, K] weight as [K, N] (the axis then is 1).
  struct QuantizedWeight {
    std::string data, scale, zero_point;
    std::vector<float> scales;  // per channel (size 1 per tensor)
    int axis = 0;
  };

  absl::StatusOr<QuantizedWeight> QuantizeWeight(const Candidate& c, bool transpose,
                                                 float extra_scale) {
    const TensorProto& proto = result_.model.graph().initializer(initializers_.at(c.weight));
    BRIGADE_ASSIGN_OR_RETURN(Tensor w, engine::onnx::TensorFromProto(proto, model_dir_));
    Shape shape = w.shape();
    std::vector<float> values(w.values<float>().begin(), w.values<float>().end());
    int axis = c.axis;
    if (transpose) {  // [N, K] -> [K, N]
      const int64_t n = shape[0], k = shape[1];
      std::vector<float> t(values.size());
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < k; ++j) {
          t[static_cast<size_t>(j * n + i)] = values[static_cast<size_t>(i * k + j)];
        }
      }
      values.swap(t);
      shape = Shape{k, n};
      axis = 1;
    }
    for (float& v : values) v *= extra_scale;
    const int64_t channels = per_channel_ ? shape[static_cast<size_t>(axis)] : 1;
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    auto channel_of = [&](int64_t i) { return per_channel_ ? (i / inner) % channels : 0; };
    std::vector<float> amax(static_cast<size_t>(channels), 0.0f);
    for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
      float& m = amax[static_cast<size_t>(channel_of(i))];
      m = std::max(m, std::abs(values[static_cast<size_t>(i)]));
    }
    const float qmax = options_.reduce_range ? 64.0f : 127.0f;
    QuantizedWeight q;
    q.axis = axis;
    for (float m : amax) q.scales.push_back(m > 0 ? m / qmax : 1.0f);
    BRIGADE_ASSIGN_OR_RETURN(Tensor wq, Tensor::Allocate(DataType::kInt8, shape));
    std::span<int8_t> out = wq.mutable_values<int8_t>();
    for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
      const float s = q.scales[static_cast<size_t>(channel_of(i))];
      const float r = std::nearbyint(values[static_cast<size_t>(i)] / s);
      out[static_cast<size_t>(i)] = static_cast<int8_t>(std::clamp(r, -qmax, qmax));
    }
    q.data = AddInitializer(StrCat(c.weight, "_quantized"), wq);
    const Shape scale_shape = per_channel_ ? Shape{channels} : Shape{};
    q.scale =
        AddInitializer(StrCat(c.weight, "_scale"),
                       *Tensor::FromValues<float>(scale_shape, std::span<const float>(q.scales)));
    std::vector<int8_t> zeros(static_cast<size_t>(channels), 0);
    q.zero_point =
        AddInitializer(StrCat(c.weight, "_zero_point"),
                       *Tensor::FromValues<int8_t>(scale_shape, std::span<const int8_t>(zeros)));
    return q;
  }

  absl::Status QuantizeStaticNode(const Candidate& c, std::vector<NodeProto>* before) {
    NodeProto* node = result_.model.mutable_graph()->mutable_node(c.node_index);
    BRIGADE_ASSIGN_OR_RETURN(QuantizedWeight w, QuantizeWeight(c, /*transpose=*/false, 1.0f));
    NodeProto dq;
    dq.set_op_type("DequantizeLinear");
    dq.set_name(StrCat(c.weight, "_DequantizeLinear_", node->name()));
    dq.add_input(w.data);
    dq.add_input(w.scale);
    dq.add_input(w.zero_point);
    dq.add_output(UniqueName(StrCat(c.weight, "_dequantized")));
    if (per_channel_) SetIntAttribute(&dq, "axis", w.axis);
    node->set_input(1, dq.output(0));
    before->push_back(std::move(dq));
    // Conv bias as int32 at scale x_scale · w_scale[c] (what QLinearConv takes).
    const auto original = original_of_.find(node->input(0));
    const std::string x_name = original == original_of_.end() ? node->input(0) : original->second;
    if (node->op_type() != "Conv" || node->input_size() < 3 || node->input(2).empty() ||
        opset_ < 13 || !activation_params_.contains(x_name)) {
      return absl::OkStatus();
    }
    const auto b = initializers_.find(node->input(2));
    if (b == initializers_.end()) return absl::OkStatus();
    BRIGADE_ASSIGN_OR_RETURN(
        Tensor bias,
        engine::onnx::TensorFromProto(result_.model.graph().initializer(b->second), model_dir_));
    if (bias.dtype() != DataType::kFp32) return absl::OkStatus();
    const int64_t channels = bias.num_elements();
    if (w.scales.size() != 1 && static_cast<int64_t>(w.scales.size()) != channels) {
      return absl::OkStatus();
    }
    const float x_scale = activation_params_.at(x_name).scale;
    std::vector<float> scales(static_cast<size_t>(channels));
    std::vector<int32_t> q(static_cast<size_t>(channels));
    std::vector<int32_t> zeros(static_cast<size_t>(channels), 0);
    for (int64_t i = 0; i < channels; ++i) {
      const float s = x_scale * w.scales[w.scales.size() == 1 ? 0 : static_cast<size_t>(i)];
      scales[static_cast<size_t>(i)] = s;
      const double r = std::nearbyint(static_cast<double>(bias.values<float>()[i]) / s);
      q[static_cast<size_t>(i)] = static_cast<int32_t>(std::clamp(r, -2147483647.0, 2147483647.0));
    }
    const std::string bias_name = node->input(2);
    const Shape shape{channels};
    NodeProto bdq;
    bdq.set_op_type("DequantizeLinear");
    bdq.set_name(StrCat(bias_name, "_DequantizeLinear_", node->name()));
    bdq.add_input(AddInitializer(StrCat(bias_name, "_quantized"),
                                 *Tensor::FromValues<int32_t>(shape, std::span<const int32_t>(q))));
    bdq.add_input(
        AddInitializer(StrCat(bias_name, "_scale"),
                       *Tensor::FromValues<float>(shape, std::span<const float>(scales))));
    bdq.add_input(
        AddInitializer(StrCat(bias_name, "_zero_point"),
                       *Tensor::FromValues<int32_t>(shape, std::span<const int32_t>(zeros))));
    bdq.add_output(UniqueName(StrCat(bias_name, "_dequantized")));
    SetIntAttribute(&bdq, "axis", 0);
    node->set_input(2, bdq.output(0));
    before->push_back(std::move(bdq));
    return absl::OkStatus();
  }

  absl::Status QuantizeDynamicNode(const Candidate& c,
                                   std::map<std::string, std::array<std::string, 3>>* quantized,
                                   std::vector<NodeProto>* nodes) {
    const NodeProto& node = result_.model.graph().node(c.node_index);
    const bool gemm = node.op_type() == "Gemm";
    const float alpha = gemm ? FloatAttribute(node, "alpha", 1.0f) : 1.0f;
    BRIGADE_ASSIGN_OR_RETURN(QuantizedWeight w, QuantizeWeight(c, c.transpose, alpha));
    const std::string& x = node.input(0);
    auto it = quantized->find(x);
    if (it == quantized->end()) {
      NodeProto dql;
      dql.set_op_type("DynamicQuantizeLinear");
      dql.set_name(StrCat(x, "_DynamicQuantizeLinear"));
      dql.add_input(x);
      for (const char* part : {"_quantized", "_scale", "_zero_point"}) {
        dql.add_output(StrCat(x, part));
      }
      it = quantized
               ->emplace(x, std::array<std::string, 3>{dql.output(0), dql.output(1), dql.output(2)})
               .first;
      nodes->push_back(std::move(dql));
    }
    const auto& [xq, xs, xzp] = it->second;
    const std::string base = node.name().empty() ? node.output(0) : node.name();
    NodeProto mm;
    mm.set_op_type("MatMulInteger");
    mm.set_name(StrCat(base, "_MatMulInteger"));
    mm.add_input(xq);
    mm.add_input(w.data);
    mm.add_input(xzp);
    mm.add_output(StrCat(base, "_int32"));
    NodeProto cast;
    cast.set_op_type("Cast");
    cast.set_name(StrCat(base, "_Cast"));
    cast.add_input(mm.output(0));
    cast.add_output(StrCat(base, "_float"));
    SetIntAttribute(&cast, "to", TensorProto::FLOAT);
    NodeProto scale;
    scale.set_op_type("Mul");
    scale.set_name(StrCat(base, "_scale_Mul"));
    scale.add_input(xs);
    scale.add_input(w.scale);
    scale.add_output(StrCat(base, "_scale"));
    const bool has_bias = gemm && node.input_size() > 2 && !node.input(2).empty();
    NodeProto mul;
    mul.set_op_type("Mul");
    mul.set_name(StrCat(base, "_Mul"));
    mul.add_input(cast.output(0));
    mul.add_input(scale.output(0));
    mul.add_output(has_bias ? StrCat(base, "_unbiased") : node.output(0));
    nodes->push_back(std::move(mm));
    nodes->push_back(std::move(cast));
    nodes->push_back(std::move(scale));
    nodes->push_back(mul);
    if (has_bias) {
      std::string bias = node.input(2);
      const float beta = FloatAttribute(node, "beta", 1.0f);
      if (beta != 1.0f) {
        BRIGADE_ASSIGN_OR_RETURN(
            Tensor b, engine::onnx::TensorFromProto(
                          result_.model.graph().initializer(initializers_.at(bias)), model_dir_));
        for (float& v : b.mutable_values<float>()) v *= beta;
        bias = AddInitializer(StrCat(bias, "_beta"), b);
      }
      NodeProto add;
      add.set_op_type("Add");
      add.set_name(StrCat(base, "_bias_Add"));
      add.add_input(mul.output(0));
      add.add_input(bias);
      add.add_output(node.output(0));
      nodes->push_back(std::move(add));
    }
    return absl::OkStatus();
  }

  // Removes the fp32 initializers no node reads any more (the weights that became int8).
  void DropUnusedInitializers() {
    GraphProto* g = result_.model.mutable_graph();
    std::set<std::string> used;
    for (const NodeProto& n : g->node()) used.insert(n.input().begin(), n.input().end());
    for (const auto& out : g->output()) used.insert(out.name());
    std::set<std::string> graph_inputs;
    for (const auto& in : g->input()) graph_inputs.insert(in.name());
    auto* inits = g->mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i) {
      const std::string& name = inits->Get(i).name();
      if (!used.contains(name) && !graph_inputs.contains(name)) inits->DeleteSubrange(i, 1);
    }
  }

  const QuantizeOptions& options_;
  const RangeMap& ranges_;
  const std::string model_dir_;
  QuantizeResult result_;
  int opset_ = 0;
  bool per_channel_ = true;
  std::unordered_map<std::string, int> initializers_;
  std::unordered_map<std::string, int> uses_;
  std::set<std::string> graph_outputs_;
  std::set<std::string> taken_;
  std::map<int, size_t> decision_index_;
  std::map<std::string, QuantParams> activation_params_;
  std::map<std::string, std::string> original_of_;  // DequantizeLinear output -> its activation
  int counter_ = 0;
};

}  // namespace

QuantParams ActivationParams(TensorRange range) {
  const double lo = std::min(0.0, static_cast<double>(range.min));
  const double hi = std::max(0.0, static_cast<double>(range.max));
  QuantParams p;
  if (!(hi - lo > 0) || !std::isfinite(hi - lo)) return p;  // all zeros: scale 1, zero point 0
  p.scale = static_cast<float>((hi - lo) / 255.0);
  p.zero_point = static_cast<int>(std::clamp(std::nearbyint(-lo / p.scale), 0.0, 255.0));
  return p;
}

std::vector<std::string> TensorsToCalibrate(const ModelProto& model,
                                            const QuantizeOptions& options) {
  // Eligibility in static form, as if every input had a range.
  QuantizeOptions s = options;
  s.mode = QuantMode::kStatic;
  RangeMap all;
  for (const NodeProto& n : model.graph().node()) {
    if (n.input_size() > 0) all[n.input(0)] = TensorRange{};
  }
  Rewriter static_rewriter(model, s, all, "");
  return static_rewriter.ActivationTensors(static_rewriter.Scan());
}

// bf16: the model as it is, marked for the engine; the decisions say which layers it rounds.
absl::StatusOr<QuantizeResult> MarkBf16(const ModelProto& model, const QuantizeOptions& options) {
  if (!options.exclude_op_types.empty() || !options.exclude_nodes.empty() ||
      !options.only_nodes.empty()) {
    return absl::InvalidArgumentError(
        "--exclude-op / --exclude-node: bf16 is the whole model's precision, not a layer's");
  }
  QuantizeResult result;
  result.model = model;
  auto* props = result.model.mutable_metadata_props();
  for (int i = props->size(); i-- > 0;) {
    if (props->Get(i).key() == engine::onnx::kPrecisionMetadataKey) props->DeleteSubrange(i, 1);
  }
  ::onnx::StringStringEntryProto* entry = props->Add();
  entry->set_key(std::string(engine::onnx::kPrecisionMetadataKey));
  entry->set_value("bf16");
  std::set<std::string> constants;
  for (const auto& init : model.graph().initializer()) constants.insert(init.name());
  for (const NodeProto& node : model.graph().node()) {
    const std::string& op = node.op_type();
    const bool known_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!known_domain || (op != "Conv" && op != "MatMul" && op != "Gemm")) {
      ++result.other_ops[known_domain ? op : StrCat(node.domain(), ".", op)];
      continue;
    }
    NodeDecision d{node.name(), op, true, ""};
    if (op != "Conv" && (node.input_size() < 2 || !constants.contains(node.input(1)))) {
      d.quantized = false;
      d.reason = "weights not constant: products of two activations stay fp32";
    }
    result.decisions.push_back(d);
  }
  return result;
}

absl::StatusOr<QuantizeResult> QuantizeModel(const ModelProto& model,
                                             const QuantizeOptions& options, const RangeMap& ranges,
                                             const std::string& model_dir) {
  if (options.mode == QuantMode::kBf16) return MarkBf16(model, options);
  Rewriter rewriter(model, options, ranges, model_dir);
  return rewriter.Run();
}

}  // namespace brigade::optimize
