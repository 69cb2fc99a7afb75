#include "engine/onnx/test_util/onnx_builder.h"

#include "core/strings.h"
#include "engine/onnx/loader/tensor_proto.h"

namespace brigade::engine::onnx {

OnnxBuilder::OnnxBuilder(int opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("brigade-test");
  auto* import = model_.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

void OnnxBuilder::Input(const std::string& name, DataType dtype, std::vector<int64_t> shape) {
  auto* input = model_.mutable_graph()->add_input();
  input->set_name(name);
  auto* tensor = input->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(ToOnnxDataType(dtype));
  auto* s = tensor->mutable_shape();
  for (int64_t d : shape) {
    auto* dim = s->add_dim();
    if (d >= 0) {
      dim->set_dim_value(d);
    } else {
      dim->set_dim_param(StrCat("d", s->dim_size()));
    }
  }
}

void OnnxBuilder::Output(const std::string& name, DataType dtype, std::vector<int64_t> shape) {
  auto* output = model_.mutable_graph()->add_output();
  output->set_name(name);
  auto* tensor = output->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(ToOnnxDataType(dtype));
  auto* s = tensor->mutable_shape();
  for (int64_t d : shape) {
    auto* dim = s->add_dim();
    if (d >= 0) {
      dim->set_dim_value(d);
    } else {
      dim->set_dim_param(StrCat("out", s->dim_size()));
    }
  }
}

void OnnxBuilder::Initializer(const std::string& name, const Tensor& tensor) {
  TensorToProto(tensor, name, model_.mutable_graph()->add_initializer());
}

::onnx::NodeProto& OnnxBuilder::Node(const std::string& op, std::vector<std::string> inputs,
                                     std::vector<std::string> outputs, const std::string& domain) {
  auto* node = model_.mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name(StrCat(op, "_", node_count_++));
  if (!domain.empty()) {
    node->set_domain(domain);
    bool imported = false;
    for (const auto& import : model_.opset_import()) imported |= import.domain() == domain;
    if (!imported) {
      auto* import = model_.add_opset_import();
      import->set_domain(domain);
      import->set_version(1);
    }
  }
  for (auto& in : inputs) node->add_input(in);
  for (auto& out : outputs) node->add_output(out);
  return *node;
}

void OnnxBuilder::SetInt(::onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}

void OnnxBuilder::SetFloat(::onnx::NodeProto& node, const std::string& name, float value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

void OnnxBuilder::SetInts(::onnx::NodeProto& node, const std::string& name,
                          std::vector<int64_t> values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void OnnxBuilder::SetString(::onnx::NodeProto& node, const std::string& name,
                            const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(value);
}

void OnnxBuilder::SetGraph(::onnx::NodeProto& node, const std::string& name,
                           const OnnxBuilder& body) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body.model_.graph();
  a->mutable_g()->set_name(name);
}

std::string OnnxBuilder::Serialize() const { return model_.SerializeAsString(); }

OnnxBuilder AddBiasGraph() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 4});
  b.Input("bias", DataType::kFp32, {-1, 4});
  b.Initializer("bias", Ramp({1, 4}, 10.0f, 1.0f));
  b.Node("Add", {"x", "bias"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 4});
  return b;
}

Tensor Ramp(std::vector<int64_t> shape, float v0, float step) {
  Shape s(shape.begin(), shape.end());
  Tensor t = *Tensor::Allocate(DataType::kFp32, s);
  float v = v0;
  for (float& x : t.mutable_values<float>()) {
    x = v;
    v += step;
  }
  return t;
}

Tensor RandomTensor(std::vector<int64_t> shape, uint32_t seed) {
  Shape s(shape.begin(), shape.end());
  Tensor t = *Tensor::Allocate(DataType::kFp32, s);
  uint32_t state = seed * 2654435761u + 1;
  for (float& x : t.mutable_values<float>()) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return t;
}

}  // namespace brigade::engine::onnx
