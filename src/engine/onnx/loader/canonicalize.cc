#include "engine/onnx/loader/canonicalize.h"

#include <string>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::engine::onnx {
namespace {

absl::StatusOr<Tensor> ConstantValue(const Node& node) {
  const AttributeMap& a = node.attributes;
  if (const Tensor* t = a.GetTensor("value")) return *t;
  if (const Attribute* f = a.Find("value_float"); f != nullptr) {
    const float v = f->f;
    return Tensor::FromValues<float>(Shape{}, std::span<const float>(&v, 1));
  }
  if (const Attribute* i = a.Find("value_int"); i != nullptr) {
    const int64_t v = i->i;
    return Tensor::FromValues<int64_t>(Shape{}, std::span<const int64_t>(&v, 1));
  }
  if (const Attribute* fs = a.Find("value_floats"); fs != nullptr) {
    return Tensor::FromValues<float>(Shape{static_cast<int64_t>(fs->floats.size())}, fs->floats);
  }
  if (const Attribute* is = a.Find("value_ints"); is != nullptr) {
    return Tensor::FromValues<int64_t>(Shape{static_cast<int64_t>(is->ints.size())}, is->ints);
  }
  if (const Attribute* s = a.Find("value_string"); s != nullptr) {
    const std::string v = s->s;
    return Tensor::FromStrings(Shape{}, std::span<const std::string>(&v, 1));
  }
  if (const Attribute* ss = a.Find("value_strings"); ss != nullptr) {
    return Tensor::FromStrings(Shape{static_cast<int64_t>(ss->strings.size())}, ss->strings);
  }
  return absl::InvalidArgumentError(
      StrCat("node '", node.name, "' (Constant): no value attribute the engine supports"));
}

// Moves integer-list attribute `name` into input `index` (filling skipped inputs with "absent").
void AttributeToInput(Graph* graph, Node* node, std::string_view name, size_t index,
                      bool as_float = false) {
  const Attribute* attr = node->attributes.Find(name);
  if (attr == nullptr) return;
  Tensor tensor;
  if (as_float) {
    auto t =
        Tensor::FromValues<float>(Shape{static_cast<int64_t>(attr->floats.size())}, attr->floats);
    if (!t.ok()) return;
    tensor = *std::move(t);
  } else {
    auto t =
        Tensor::FromValues<int64_t>(Shape{static_cast<int64_t>(attr->ints.size())}, attr->ints);
    if (!t.ok()) return;
    tensor = *std::move(t);
  }
  const ValueId id = graph->AddConstant(StrCat(node->name, "/", name), std::move(tensor));
  if (node->inputs.size() <= index) node->inputs.resize(index + 1, kNoValue);
  node->inputs[index] = id;
  node->attributes.Erase(name);
}

void ScalarAttributeToInput(Graph* graph, Node* node, std::string_view name, size_t index,
                            float default_value, bool always) {
  const Attribute* attr = node->attributes.Find(name);
  if (attr == nullptr && !always) return;
  const float v = attr != nullptr ? attr->f : default_value;
  auto t = Tensor::FromValues<float>(Shape{}, std::span<const float>(&v, 1));
  if (!t.ok()) return;
  const ValueId id = graph->AddConstant(StrCat(node->name, "/", name), *std::move(t));
  if (node->inputs.size() <= index) node->inputs.resize(index + 1, kNoValue);
  node->inputs[index] = id;
  node->attributes.Erase(name);
}

}  // namespace

absl::Status CanonicalizeGraph(Graph* graph) {
  for (Node& node : graph->nodes()) {
    if (!node.domain.empty() || node.removed) continue;
    const std::string& op = node.op_type;
    if (op == "Constant") {
      if (node.outputs.size() != 1 || node.outputs[0] == kNoValue) {
        return absl::InvalidArgumentError(
            StrCat("node '", node.name, "' (Constant): needs exactly one output"));
      }
      BRIGADE_ASSIGN_OR_RETURN(Tensor value, ConstantValue(node));
      Value& out = graph->value(node.outputs[0]);
      out.dtype = value.dtype();
      out.shape = value.shape();
      out.constant = std::move(value);
      node.removed = true;
      continue;
    }
    if (op == "Clip" && node.opset < 11) {
      // min/max are floats of the input type; fp32 is the only type old Clip accepted.
      if (node.attributes.Has("min")) ScalarAttributeToInput(graph, &node, "min", 1, 0, true);
      if (node.attributes.Has("max")) ScalarAttributeToInput(graph, &node, "max", 2, 0, true);
    } else if (op == "Pad" && node.opset < 11) {
      AttributeToInput(graph, &node, "pads", 1);
      if (node.attributes.Has("value")) ScalarAttributeToInput(graph, &node, "value", 2, 0, true);
    } else if (op == "Slice" && node.opset < 10) {
      AttributeToInput(graph, &node, "starts", 1);
      AttributeToInput(graph, &node, "ends", 2);
      AttributeToInput(graph, &node, "axes", 3);
    } else if ((op == "Squeeze" || op == "Unsqueeze") && node.opset < 13) {
      AttributeToInput(graph, &node, "axes", 1);
    } else if (op == "Split" && node.opset < 13) {
      AttributeToInput(graph, &node, "split", 1);
    }
  }
  graph->Compact();
  return absl::OkStatus();
}

}  // namespace brigade::engine::onnx
