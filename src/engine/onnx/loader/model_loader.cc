#include "engine/onnx/loader/model_loader.h"

#include <fcntl.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/shape.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/ir/onnx_types.h"
#include "engine/onnx/kernels/conv_geometry.h"
#include "engine/onnx/kernels/registry.h"
#include "engine/onnx/loader/canonicalize.h"
#include "engine/onnx/loader/tensor_proto.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace brigade::engine::onnx {
namespace {

// Protobuf cannot parse messages of 2 GiB or more; larger models must use external data.
constexpr size_t kMaxModelBytes = std::numeric_limits<int>::max();

std::string NormalizeDomain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

// The checker's model-level steps with our model directory, so external-data checks resolve
// relative to the model instead of the working directory (check_model(ModelProto) has no
// directory).
void CheckModel(const ::onnx::ModelProto& model, std::string_view model_dir) {
  ::onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  if (model.ir_version() == 0) {
    throw std::runtime_error("the model has no ir_version");
  }
  if (model.ir_version() > ::onnx::Version::IR_VERSION) {
    throw std::runtime_error(StrCat("ir_version ", model.ir_version(),
                                    " is newer than this ONNX checker supports (",
                                    static_cast<int>(::onnx::Version::IR_VERSION), ")"));
  }
  std::unordered_map<std::string, int> opsets;
  for (const auto& opset : model.opset_import()) {
    opsets[opset.domain()] = static_cast<int>(opset.version());
  }
  if (model.ir_version() >= 3 && opsets.empty()) {
    throw std::runtime_error("a model with ir_version >= 3 must import an opset");
  }
  ctx.set_opset_imports(opsets);
  ctx.set_model_dir(std::string(model_dir));
  ::onnx::checker::LexicalScopeContext lex;
  ::onnx::checker::check_graph(model.graph(), ctx, lex);
}

// Whether a sliding-window attribute (of a convolution or a pooling) holds values ONNX's shape
// rules can compute with: strides, dilations, kernel sizes and group positive, pads not negative,
// and all small enough that their products stay far inside int64.
bool WindowAttributeInRange(const ::onnx::AttributeProto& attribute) {
  const std::string& name = attribute.name();
  const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
  const bool non_negative = name == "pads";
  if (name == "group") return attribute.i() > 0 && attribute.i() <= kMaxWindowValue;
  if (!positive && !non_negative) return true;
  for (int64_t value : attribute.ints()) {
    if (value > kMaxWindowValue || value < (positive ? 1 : 0)) return false;
  }
  return true;
}

// Whether a tensor's raw bytes are as many as its dims say. ONNX's shape inference reads constant
// tensors (initializers, Constant values) through a parser that sizes its result from the bytes
// and copies as if they were whole elements: a short or ragged raw_data crashes it. The engine's
// own loader refuses such a tensor later, naming it.
bool RawDataMatchesDims(const ::onnx::TensorProto& tensor) {
  if (!tensor.has_raw_data()) return true;
  const std::optional<DataType> dtype = FromOnnxDataType(tensor.data_type());
  // Strings, complex and unknown types: no raw form the engine reads.
  const size_t element = dtype.has_value() ? DataTypeSize(*dtype) : 0;
  if (element == 0) return false;
  const std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto count = ElementCount(dims);
  if (!count.ok() || static_cast<uint64_t>(*count) > tensor.raw_data().size() / element) {
    return false;
  }
  return static_cast<size_t>(*count) * element == tensor.raw_data().size();
}

// Prepares `model` for ONNX's shape inference, which runs on untrusted bytes and whose convolution
// rule (in the ONNX release Debian ships) trusts the weight's rank: a kernel derived from a
// weight of another rank than the input indexes past the input's dimensions and crashes the
// process. Every convolution gets its kernel_shape attribute from its weight initializer, which
// the rule checks against the input's rank (the attribute means exactly what the weight's
// dimensions say, so the model is unchanged). Returns false when that is not possible (a weight
// computed in the graph other than by a dequantization or cast, or a subgraph, where inference
// would meet the same rule): inference is then skipped, its shapes being hints the planner does
// not need (though some fusions do). The same rules divide by strides and dilations and multiply
// kernel sizes by dilations unchecked, so any window attribute out of range skips inference too;
// the engine's kernels refuse those nodes with a message naming the attribute.
//
// Subgraphs (If branches, Loop bodies) get the same treatment, recursively, with the enclosing
// graphs' initializers in scope; nesting beyond kMaxSubgraphDepth skips inference (the builder
// then refuses the model).
bool MakeGraphShapeInferenceSafe(
    ::onnx::GraphProto* graph,
    std::unordered_map<std::string, const ::onnx::TensorProto*> initializers, int depth) {
  for (const auto& init : graph->initializer()) initializers[init.name()] = &init;
  std::unordered_map<std::string, const ::onnx::NodeProto*> producers;
  for (const auto& node : graph->node()) {
    for (const std::string& output : node.output()) producers[output] = &node;
  }
  if (graph->sparse_initializer_size() > 0) return false;
  for (const auto& init : graph->initializer()) {
    if (!RawDataMatchesDims(init)) return false;
  }
  for (auto& node : *graph->mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.graphs_size() > 0) return false;
      if (attribute.has_g() &&
          (depth >= kMaxSubgraphDepth ||
           !MakeGraphShapeInferenceSafe(attribute.mutable_g(), initializers, depth + 1))) {
        return false;
      }
      if (attribute.has_t() && !RawDataMatchesDims(attribute.t())) return false;
      for (const auto& t : attribute.tensors()) {
        if (!RawDataMatchesDims(t)) return false;
      }
      if (attribute.has_sparse_tensor() || attribute.sparse_tensors_size() > 0) return false;
    }
    if (NormalizeDomain(node.domain()) != "") continue;
    // Pad's (pre-opset-11) pads may be negative: they crop.
    if (node.op_type() != "Pad") {
      for (const auto& attribute : node.attribute()) {
        if (!WindowAttributeInRange(attribute)) return false;
      }
    }
    const std::string& op = node.op_type();
    int weight_input = -1;
    if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") weight_input = 1;
    if (op == "QLinearConv") weight_input = 3;
    if (weight_input < 0) continue;
    bool has_kernel_shape = false;
    for (const auto& attribute : node.attribute()) {
      has_kernel_shape = has_kernel_shape || attribute.name() == "kernel_shape";
    }
    if (has_kernel_shape) continue;
    if (node.input_size() <= weight_input) continue;  // the checker or the engine refuses it
    // The weight is an initializer, or one seen through ops whose output has their input's
    // shape (QDQ models dequantize their weights).
    std::string weight = node.input(weight_input);
    for (int hops = 0; hops < 4 && !initializers.contains(weight); ++hops) {
      auto producer = producers.find(weight);
      if (producer == producers.end()) break;
      const ::onnx::NodeProto& p = *producer->second;
      const bool same_shape = NormalizeDomain(p.domain()).empty() && p.input_size() > 0 &&
                              (p.op_type() == "DequantizeLinear" || p.op_type() == "Cast" ||
                               p.op_type() == "Identity" || p.op_type() == "QuantizeLinear");
      if (!same_shape) break;
      weight = p.input(0);
    }
    auto it = initializers.find(weight);
    if (it == initializers.end()) return false;
    ::onnx::AttributeProto* kernel = node.add_attribute();
    kernel->set_name("kernel_shape");
    kernel->set_type(::onnx::AttributeProto::INTS);
    for (int d = 2; d < it->second->dims_size(); ++d) kernel->add_ints(it->second->dims(d));
    if (!WindowAttributeInRange(*kernel)) return false;
  }
  return true;
}

bool MakeShapeInferenceSafe(::onnx::ModelProto* model) {
  return MakeGraphShapeInferenceSafe(model->mutable_graph(), {}, 0);
}

absl::StatusOr<std::optional<Shape>> ShapeOf(const ::onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::optional<Shape>();
  Shape shape;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
  }
  return std::optional<Shape>(std::move(shape));
}

absl::Status ConvertAttribute(const ::onnx::AttributeProto& proto, std::string_view model_dir,
                              AttributeMap* out) {
  using A = ::onnx::AttributeProto;
  Attribute attr;
  switch (proto.type()) {
    case A::FLOAT:
      attr.kind = Attribute::Kind::kFloat;
      attr.f = proto.f();
      break;
    case A::INT:
      attr.kind = Attribute::Kind::kInt;
      attr.i = proto.i();
      break;
    case A::STRING:
      attr.kind = Attribute::Kind::kString;
      attr.s = proto.s();
      break;
    case A::TENSOR: {
      attr.kind = Attribute::Kind::kTensor;
      BRIGADE_ASSIGN_OR_RETURN(attr.t, TensorFromProto(proto.t(), model_dir));
      break;
    }
    case A::FLOATS:
      attr.kind = Attribute::Kind::kFloats;
      attr.floats.assign(proto.floats().begin(), proto.floats().end());
      break;
    case A::INTS:
      attr.kind = Attribute::Kind::kInts;
      attr.ints.assign(proto.ints().begin(), proto.ints().end());
      break;
    case A::STRINGS:
      attr.kind = Attribute::Kind::kStrings;
      attr.strings.assign(proto.strings().begin(), proto.strings().end());
      break;
    default:
      // Subgraphs, sparse tensors, type protos: not represented. Ops that need them have no
      // kernel, so the support check reports the node.
      return absl::OkStatus();
  }
  out->Set(proto.name(), std::move(attr));
  return absl::OkStatus();
}

class GraphBuilder {
 public:
  // The model's main graph. `input_defaults` (borrowed for the call to Build) receives the
  // initializers that became defaults of graph inputs (LoadOptions::initializer_inputs). Build
  // frees each initializer's raw_data in `model` once it is a Tensor, so that the file's weights
  // are not held twice while the graph is built.
  GraphBuilder(::onnx::ModelProto* model, std::string_view model_dir, const LoadOptions& options,
               std::map<std::string, Tensor>* input_defaults)
      : proto_(model->graph()),
        release_(model->mutable_graph()),
        model_dir_(model_dir),
        options_(options),
        input_defaults_(input_defaults) {
    for (const auto& opset : model->opset_import()) {
      graph_.opsets()[NormalizeDomain(opset.domain())] = static_cast<int>(opset.version());
    }
  }

  absl::StatusOr<Graph> Build() {
    const ::onnx::GraphProto& g = proto_;
    std::set<std::string_view> graph_inputs;
    for (const auto& input : g.input()) graph_inputs.insert(input.name());
    // Initializers are constants (even when also listed as graph inputs: requests do not override
    // weights), except those the caller asks to serve as inputs: their initializer is the default.
    for (int i = 0; i < g.initializer_size(); ++i) {
      const ::onnx::TensorProto& init = g.initializer(i);
      if (graph_.FindValue(init.name()) != kNoValue ||
          (input_defaults_ != nullptr && input_defaults_->contains(init.name()))) {
        return absl::InvalidArgumentError(
            StrCat("initializer '", init.name(), "' is defined twice"));
      }
      BRIGADE_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(init, model_dir_));
      // Swapped with an empty string, not cleared: clear() would keep the buffer.
      if (release_ != nullptr) {
        std::string().swap(*release_->mutable_initializer(i)->mutable_raw_data());
      }
      if (input_defaults_ != nullptr && graph_inputs.contains(init.name()) &&
          std::find(options_.initializer_inputs.begin(), options_.initializer_inputs.end(),
                    init.name()) != options_.initializer_inputs.end()) {
        input_defaults_->emplace(init.name(), std::move(t));
        continue;
      }
      Value value;
      value.name = init.name();
      value.dtype = t.dtype();
      value.shape = t.shape();
      value.constant = std::move(t);
      graph_.AddValue(std::move(value));
    }
    for (const auto& input : g.input()) {
      if (graph_.FindValue(input.name()) != kNoValue) {
        // An initializer of the main graph; a subgraph's formal inputs are positional, so a
        // repeated name there is a malformed body.
        if (parent_ == nullptr) continue;
        return absl::InvalidArgumentError(
            StrCat("subgraph input '", input.name(), "' is defined twice"));
      }
      BRIGADE_ASSIGN_OR_RETURN(ValueId id, AddTyped(input, "graph input"));
      graph_.inputs().push_back(id);
    }
    std::unordered_map<std::string, const ::onnx::ValueInfoProto*> infos;
    for (const auto& info : g.value_info()) infos[info.name()] = &info;
    for (const auto& info : g.output()) infos[info.name()] = &info;
    // Create every node's outputs first, so node order in the file does not matter.
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& node = g.node(i);
      for (const std::string& name : node.output()) {
        if (name.empty()) continue;
        if (graph_.FindValue(name) != kNoValue) {
          return absl::InvalidArgumentError(StrCat("node '", NodeName(node, i), "' (",
                                                   node.op_type(), "): output '", name,
                                                   "' is already defined"));
        }
        Value value;
        value.name = name;
        auto it = infos.find(name);
        if (it != infos.end()) {
          const auto& type = it->second->type();
          if (type.has_tensor_type()) {
            value.dtype =
                FromOnnxDataType(type.tensor_type().elem_type()).value_or(DataType::kInvalid);
          }
          BRIGADE_ASSIGN_OR_RETURN(value.shape, ShapeOf(type));
        }
        graph_.AddValue(std::move(value));
      }
    }
    for (int i = 0; i < g.node_size(); ++i) BRIGADE_RETURN_IF_ERROR(AddNode(g.node(i), i));
    for (const auto& output : g.output()) {
      // A subgraph may return an enclosing graph's value as it is.
      BRIGADE_ASSIGN_OR_RETURN(const ValueId id, Resolve(output.name()));
      if (id == kNoValue) {
        return absl::InvalidArgumentError(
            StrCat("graph output '", output.name(), "' is not produced by any node"));
      }
      Value& v = graph_.value(id);
      if (output.type().has_tensor_type()) {
        if (v.dtype == DataType::kInvalid) {
          v.dtype = FromOnnxDataType(output.type().tensor_type().elem_type())
                        .value_or(DataType::kInvalid);
        }
        // Subgraph outputs are what the If check and the control-flow kernels compare.
        if (parent_ != nullptr && !v.shape.has_value()) {
          BRIGADE_ASSIGN_OR_RETURN(v.shape, ShapeOf(output.type()));
        }
      }
      graph_.outputs().push_back(id);
    }
    return std::move(graph_);
  }

 private:
  // A subgraph: attribute `attribute` of `owner`, the node `parent` is building. The subgraph's
  // outer-scope reads become captured inputs (attribute.h), appended to `owner`'s inputs.
  GraphBuilder(GraphBuilder* parent, const ::onnx::GraphProto& proto, Node* owner,
               size_t owner_formal_inputs, Attribute* attribute, std::string_view attribute_name)
      : proto_(proto),
        model_dir_(parent->model_dir_),
        options_(parent->options_),
        input_defaults_(nullptr),
        parent_(parent),
        owner_(owner),
        owner_formal_inputs_(owner_formal_inputs),
        attribute_(attribute),
        depth_(parent->depth_ + 1),
        prefix_(StrCat(owner->name, "/", attribute_name)) {
    graph_.opsets() = parent->graph_.opsets();
  }

  std::string NodeName(const ::onnx::NodeProto& node, int index) const {
    std::string name =
        node.name().empty() ? StrCat(node.op_type(), "_", index) : std::string(node.name());
    // Subgraph nodes carry their enclosing node's path: names key packed weights and profiles,
    // and ONNX only makes them unique within one graph.
    if (parent_ == nullptr) return name;
    return name.starts_with('/') ? StrCat(prefix_, name) : StrCat(prefix_, "/", name);
  }

  // The value `name` as this graph sees it: its own, or an enclosing graph's, captured (once) as
  // an input of this graph and of every graph in between. kNoValue when no scope defines it.
  absl::StatusOr<ValueId> Resolve(const std::string& name) {
    const ValueId local = graph_.FindValue(name);
    if (local != kNoValue || parent_ == nullptr) return local;
    BRIGADE_ASSIGN_OR_RETURN(const ValueId outer, parent_->Resolve(name));
    if (outer == kNoValue) return kNoValue;
    const Value& outer_value = parent_->graph_.value(outer);
    Value value;
    value.name = name;
    value.dtype = outer_value.dtype;
    value.shape = outer_value.shape;
    const ValueId id = graph_.AddValue(std::move(value));
    graph_.inputs().push_back(id);
    // Captured values follow the op's own inputs, once each, even when one of those is the same
    // value: passes rebuild that tail (optimizer.cc).
    std::vector<ValueId>& inputs = owner_->inputs;
    auto it = std::find(inputs.begin() + static_cast<std::ptrdiff_t>(owner_formal_inputs_),
                        inputs.end(), outer);
    if (it == inputs.end()) it = inputs.insert(inputs.end(), outer);
    attribute_->captures.push_back(static_cast<int>(it - inputs.begin()));
    return id;
  }

  absl::StatusOr<ValueId> AddTyped(const ::onnx::ValueInfoProto& info, std::string_view what) {
    if (!info.type().has_tensor_type()) {
      return absl::UnimplementedError(
          StrCat(what, " '", info.name(), "' is not a tensor (sequences, maps are unsupported)"));
    }
    const auto dtype = FromOnnxDataType(info.type().tensor_type().elem_type());
    if (!dtype.has_value()) {
      return absl::UnimplementedError(StrCat(what, " '", info.name(), "' has element type ",
                                             info.type().tensor_type().elem_type(),
                                             " which Brigade does not support"));
    }
    Value value;
    value.name = info.name();
    value.dtype = *dtype;
    BRIGADE_ASSIGN_OR_RETURN(value.shape, ShapeOf(info.type()));
    return graph_.AddValue(std::move(value));
  }

  // Builds subgraph attribute `proto` of `node` (whose formal inputs are already set).
  absl::Status AddSubgraph(const ::onnx::AttributeProto& proto, Node* node, size_t formal_inputs) {
    if (depth_ + 1 > kMaxSubgraphDepth) {
      return absl::InvalidArgumentError(
          StrCat("subgraphs nest deeper than ", kMaxSubgraphDepth, " levels"));
    }
    Attribute attribute;
    attribute.kind = Attribute::Kind::kGraph;
    GraphBuilder child(this, proto.g(), node, formal_inputs, &attribute, proto.name());
    BRIGADE_ASSIGN_OR_RETURN(Graph graph, child.Build());
    BRIGADE_RETURN_IF_ERROR(CanonicalizeGraph(&graph));
    BRIGADE_RETURN_IF_ERROR(graph.SortTopologically());
    attribute.g = SubgraphPtr(std::move(graph));
    node->attributes.Set(proto.name(), std::move(attribute));
    return absl::OkStatus();
  }

  absl::Status AddNode(const ::onnx::NodeProto& proto, int index) {
    Node node;
    node.name = NodeName(proto, index);
    node.op_type = proto.op_type();
    node.domain = NormalizeDomain(proto.domain());
    const int opset = graph_.opset(node.domain);
    if (opset == 0 && graph_.opsets().find(node.domain) == graph_.opsets().end()) {
      return absl::InvalidArgumentError(StrCat("node '", node.name, "' (", node.op_type,
                                               "): domain '", node.domain,
                                               "' is not imported by the model"));
    }
    node.opset = opset;
    for (const std::string& name : proto.input()) {
      if (name.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      BRIGADE_ASSIGN_OR_RETURN(const ValueId id, Resolve(name));
      if (id == kNoValue) {
        return absl::InvalidArgumentError(StrCat("node '", node.name, "' (", node.op_type,
                                                 "): input '", name, "' is not defined"));
      }
      node.inputs.push_back(id);
    }
    for (const std::string& name : proto.output()) {
      node.outputs.push_back(name.empty() ? kNoValue : graph_.FindValue(name));
    }
    for (const auto& attr : proto.attribute()) {
      absl::Status status = attr.type() == ::onnx::AttributeProto::GRAPH
                                ? AddSubgraph(attr, &node, static_cast<size_t>(proto.input_size()))
                                : ConvertAttribute(attr, model_dir_, &node.attributes);
      if (!status.ok()) {
        return absl::Status(status.code(),
                            StrCat("node '", node.name, "' (", node.op_type, "): attribute '",
                                   attr.name(), "': ", status.message()));
      }
    }
    if (node.domain.empty() && node.op_type == "If") BRIGADE_RETURN_IF_ERROR(CheckIfBranches(node));
    graph_.nodes().push_back(std::move(node));
    return absl::OkStatus();
  }

  // The planner gives every value one type and shape, so both branches of an If must produce
  // the same ones (ONNX allows them to differ). What the files declare is compared here, at
  // load; the planner compares the concrete shapes again.
  static absl::Status CheckIfBranches(const Node& node) {
    const Attribute* then_branch = node.attributes.GetGraph("then_branch");
    const Attribute* else_branch = node.attributes.GetGraph("else_branch");
    if (then_branch == nullptr || else_branch == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("node '", node.name, "' (If): needs subgraphs then_branch and else_branch"));
    }
    const Graph& a = *then_branch->g;
    const Graph& b = *else_branch->g;
    if (a.outputs().size() != b.outputs().size() || a.outputs().size() != node.outputs.size()) {
      return absl::InvalidArgumentError(
          StrCat("node '", node.name, "' (If): then_branch has ", a.outputs().size(),
                 " outputs, else_branch ", b.outputs().size(), ", the node ", node.outputs.size()));
    }
    for (size_t k = 0; k < a.outputs().size(); ++k) {
      const Value& x = a.value(a.outputs()[k]);
      const Value& y = b.value(b.outputs()[k]);
      bool same =
          x.dtype == DataType::kInvalid || y.dtype == DataType::kInvalid || x.dtype == y.dtype;
      if (same && x.shape.has_value() && y.shape.has_value()) {
        same = x.shape->size() == y.shape->size();
        for (size_t d = 0; same && d < x.shape->size(); ++d) {
          same = (*x.shape)[d] < 0 || (*y.shape)[d] < 0 || (*x.shape)[d] == (*y.shape)[d];
        }
      }
      if (!same) {
        return absl::UnimplementedError(StrCat(
            "node '", node.name, "' (If): output ", k, " is ", DataTypeName(x.dtype), " ",
            x.shape.has_value() ? ShapeToString(*x.shape) : "[?]", " in then_branch but ",
            DataTypeName(y.dtype), " ", y.shape.has_value() ? ShapeToString(*y.shape) : "[?]",
            " in else_branch; Brigade plans one type and shape per value, so both branches must "
            "agree"));
      }
    }
    return absl::OkStatus();
  }

  const ::onnx::GraphProto& proto_;
  ::onnx::GraphProto* release_ = nullptr;  // main graph only: where Build frees raw_data
  const std::string_view model_dir_;
  const LoadOptions& options_;
  std::map<std::string, Tensor>* input_defaults_;  // null for subgraphs
  GraphBuilder* const parent_ = nullptr;           // null for the main graph
  Node* const owner_ = nullptr;
  const size_t owner_formal_inputs_ = 0;
  Attribute* const attribute_ = nullptr;
  const int depth_ = 0;
  const std::string prefix_;
  Graph graph_;
};

absl::Status CheckSupport(const Graph& graph) {
  const int opset = graph.opset("");
  if (opset != 0 && (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)) {
    return absl::UnimplementedError(StrCat("the model imports ONNX opset ", opset,
                                           "; Brigade supports opsets ", kMinOnnxOpset, "–",
                                           kMaxOnnxOpset));
  }
  const KernelRegistry& registry = KernelRegistry::Get();
  for (const Node& node : graph.nodes()) {
    for (const Attribute* subgraph : Subgraphs(node)) {
      BRIGADE_RETURN_IF_ERROR(CheckSupport(*subgraph->g));
    }
    if (registry.Find(node.domain, node.op_type, node.opset) != nullptr) continue;
    const std::string op =
        node.domain.empty() ? node.op_type : StrCat(node.domain, ".", node.op_type);
    if (registry.HasOp(node.domain, node.op_type)) {
      return absl::UnimplementedError(StrCat("node '", node.name, "' (", op, "): opset ",
                                             node.opset, " of this op is not supported"));
    }
    return absl::UnimplementedError(
        StrCat("node '", node.name, "' (", op, "): op is not supported by Brigade's engine"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// Parses a ModelProto from `input`, at most kMaxModelBytes of it.
absl::StatusOr<::onnx::ModelProto> ParseModel(google::protobuf::io::ZeroCopyInputStream* input) {
  ::onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(input);
  stream.SetTotalBytesLimit(static_cast<int>(kMaxModelBytes));
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError("not a valid ONNX model (protobuf parse failed)");
  }
  return model;
}

absl::StatusOr<LoadedModel> LoadParsedModel(::onnx::ModelProto model, std::string_view model_dir,
                                            const LoadOptions& options);

}  // namespace

absl::StatusOr<LoadedModel> LoadOnnxBytes(std::string_view bytes, std::string_view model_dir,
                                          const LoadOptions& options) {
  if (bytes.size() > kMaxModelBytes) {
    return absl::InvalidArgumentError("model file exceeds 2 GiB; use ONNX external data");
  }
  google::protobuf::io::ArrayInputStream input(bytes.data(), static_cast<int>(bytes.size()));
  BRIGADE_ASSIGN_OR_RETURN(::onnx::ModelProto model, ParseModel(&input));
  return LoadParsedModel(std::move(model), model_dir, options);
}

namespace {

absl::StatusOr<LoadedModel> LoadParsedModel(::onnx::ModelProto model, std::string_view model_dir,
                                            const LoadOptions& options) {
  // Validate external-data paths before the checker probes any file.
  for (const auto& init : model.graph().initializer()) {
    if (init.data_location() != ::onnx::TensorProto::EXTERNAL) continue;
    for (const auto& entry : init.external_data()) {
      if (entry.key() == "location") {
        BRIGADE_RETURN_IF_ERROR(ResolveExternalDataPath(model_dir, entry.value()).status());
      }
    }
  }
  if (options.run_checker) {
    try {
      CheckModel(model, model_dir);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(StrCat("ONNX checker: ", e.what()));
    }
  }
  if (MakeShapeInferenceSafe(&model)) {
    try {
      ::onnx::ShapeInferenceOptions shape_options(/*check_type=*/false, /*error_mode=*/0,
                                                  /*enable_data_propagation=*/true);
      ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(),
                                           shape_options);
    } catch (const std::exception&) {
      // Static shapes are hints; the planner derives real shapes per request.
    }
  }
  LoadedModel loaded;
  loaded.ir_version = model.ir_version();
  loaded.producer_name = model.producer_name();
  loaded.producer_version = model.producer_version();
  loaded.graph_name = model.graph().name();
  for (const auto& entry : model.metadata_props()) loaded.metadata[entry.key()] = entry.value();
  GraphBuilder builder(&model, model_dir, options, &loaded.input_defaults);
  BRIGADE_ASSIGN_OR_RETURN(loaded.graph, builder.Build());
  BRIGADE_RETURN_IF_ERROR(CanonicalizeGraph(&loaded.graph));
  BRIGADE_RETURN_IF_ERROR(loaded.graph.SortTopologically());
  if (options.require_supported) BRIGADE_RETURN_IF_ERROR(CheckSupport(loaded.graph));
  return loaded;
}

}  // namespace

absl::StatusOr<LoadedModel> LoadOnnxFile(const std::string& path, const LoadOptions& options) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) {
    return absl::NotFoundError(StrCat("cannot read model file '", path, "': ", error.message()));
  }
  if (size > kMaxModelBytes) {
    return absl::InvalidArgumentError(
        StrCat("model file '", path, "' exceeds 2 GiB; use ONNX external data"));
  }
  // Parsed straight from the file, so the bytes are never held beside the parsed model: for a
  // 259 MB DistilBERT that was a third of the load's peak memory.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(StrCat("cannot read model file '", path, "'"));
  absl::StatusOr<::onnx::ModelProto> model;
  {
    google::protobuf::io::FileInputStream input(fd);
    input.SetCloseOnDelete(true);
    model = ParseModel(&input);
    if (input.GetErrno() != 0) {
      return absl::NotFoundError(StrCat("cannot read model file '", path, "'"));
    }
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  auto loaded = model.ok() ? LoadParsedModel(*std::move(model), dir.empty() ? "." : dir, options)
                           : absl::StatusOr<LoadedModel>(model.status());
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(),
                        StrCat("'", path, "': ", loaded.status().message()));
  }
  return loaded;
}

}  // namespace brigade::engine::onnx
