#include "engine/onnx/conformance/node_test_case.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/kernels/registry.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/loader/tensor_proto.h"
#include "engine/onnx/passes/optimizer.h"
#include "onnx/onnx_pb.h"

namespace brigade::engine::onnx {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<Tensor> ReadTensor(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ::onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(StrCat("cannot parse ", path.string()));
  }
  return TensorFromProto(proto, path.parent_path().string());
}

absl::StatusOr<std::vector<Tensor>> ReadTensors(const fs::path& dir, std::string_view prefix) {
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    const fs::path path = dir / StrCat(prefix, "_", i, ".pb");
    if (!fs::exists(path)) break;
    BRIGADE_ASSIGN_OR_RETURN(Tensor t, ReadTensor(path));
    tensors.push_back(std::move(t));
  }
  return tensors;
}

template <typename T>
std::string CompareValues(const Tensor& got, const Tensor& want) {
  const auto g = got.values<T>();
  const auto w = want.values<T>();
  for (size_t i = 0; i < w.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      const double a = static_cast<double>(g[i]), b = static_cast<double>(w[i]);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (std::isinf(b) && a == b) continue;
      if (!(std::abs(a - b) <= 1e-7 + 1e-3 * std::abs(b))) {
        return StrCat("element ", i, ": got ", a, ", expected ", b);
      }
    } else {
      if (g[i] != w[i]) {
        return StrCat("element ", i, ": got ", static_cast<int64_t>(g[i]), ", expected ",
                      static_cast<int64_t>(w[i]));
      }
    }
  }
  return "";
}

std::string Compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return StrCat("type ", DataTypeName(got.dtype()), ", expected ", DataTypeName(want.dtype()));
  }
  if (got.shape() != want.shape()) {
    return StrCat("shape ", ShapeToString(got.shape()), ", expected ", ShapeToString(want.shape()));
  }
  switch (want.dtype()) {
    case DataType::kFp32:
      return CompareValues<float>(got, want);
    case DataType::kFp64:
      return CompareValues<double>(got, want);
    case DataType::kInt64:
      return CompareValues<int64_t>(got, want);
    case DataType::kInt32:
      return CompareValues<int32_t>(got, want);
    case DataType::kInt16:
      return CompareValues<int16_t>(got, want);
    case DataType::kInt8:
      return CompareValues<int8_t>(got, want);
    case DataType::kUint8:
      return CompareValues<uint8_t>(got, want);
    case DataType::kUint16:
    case DataType::kFp16:
    case DataType::kBf16:
      return CompareValues<uint16_t>(got, want);
    case DataType::kUint32:
      return CompareValues<uint32_t>(got, want);
    case DataType::kUint64:
      return CompareValues<uint64_t>(got, want);
    case DataType::kBool:
      return CompareValues<bool>(got, want);
    default:
      return StrCat("cannot compare ", DataTypeName(want.dtype()));
  }
}

NodeTestResult Fail(std::string detail) {
  return NodeTestResult{NodeTestOutcome::kFailed, std::move(detail)};
}

// Why a test is outside the engine's declared scope, or "" when it is in scope: the default
// opset outside 7–17, or graph inputs/outputs that are not tensors (sequences, optionals).
std::string OutOfScope(const fs::path& model_path) {
  std::ifstream file(model_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ::onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return "";
  for (const auto& opset : model.opset_import()) {
    if ((opset.domain().empty() || opset.domain() == "ai.onnx") &&
        (opset.version() < kMinOnnxOpset || opset.version() > kMaxOnnxOpset)) {
      return StrCat("opset ", opset.version(), " outside ", kMinOnnxOpset, "-", kMaxOnnxOpset);
    }
  }
  for (const auto* list : {&model.graph().input(), &model.graph().output()}) {
    for (const auto& info : *list) {
      if (!info.type().has_tensor_type()) {
        return StrCat("non-tensor graph input/output '", info.name(), "'");
      }
    }
  }
  return "";
}

// ONNX's test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): reinterpret.
Tensor AsType(const Tensor& t, DataType want) {
  if (t.dtype() == DataType::kUint16 && want == DataType::kBf16) {
    auto copy = Tensor::Copy(DataType::kBf16, t.shape(), t.bytes());
    if (copy.ok()) return *copy;
  }
  return t;
}

}  // namespace

NodeTestResult RunNodeTest(const std::string& dir) {
  const fs::path root(dir);
  if (std::string reason = OutOfScope(root / "model.onnx"); !reason.empty()) {
    return NodeTestResult{NodeTestOutcome::kSkipped, reason};
  }
  LoadOptions describe;
  describe.require_supported = false;
  auto loaded = LoadOnnxFile((root / "model.onnx").string(), describe);
  if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
  const KernelRegistry& registry = KernelRegistry::Get();
  for (const Node& node : loaded->graph.nodes()) {
    if (!registry.HasOp(node.domain, node.op_type)) {
      return NodeTestResult{NodeTestOutcome::kSkipped,
                            StrCat("op ", node.op_type, " not implemented")};
    }
  }
  auto supported = LoadOnnxFile((root / "model.onnx").string());
  if (!supported.ok()) return Fail(std::string(supported.status().message()));
  Graph graph = std::move(supported->graph);
  std::vector<DataType> input_types;
  for (ValueId id : graph.inputs()) input_types.push_back(graph.value(id).dtype);
  std::vector<DataType> output_types;
  for (ValueId id : graph.outputs()) output_types.push_back(graph.value(id).dtype);
  if (auto report = OptimizeGraph(&graph); !report.ok()) {
    return Fail(std::string(report.status().message()));
  }
  auto compiled = CompiledModel::Compile(fs::path(dir).filename().string(), std::move(graph));
  if (!compiled.ok()) return Fail(std::string(compiled.status().message()));
  auto session = Session::Create(*compiled, Session::Options{});
  if (!session.ok()) return Fail(std::string(session.status().message()));

  bool any = false;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory() || entry.path().filename().string().rfind("test_data_set_", 0) != 0) {
      continue;
    }
    any = true;
    auto inputs = ReadTensors(entry.path(), "input");
    auto expected = ReadTensors(entry.path(), "output");
    if (!inputs.ok()) return Fail(std::string(inputs.status().message()));
    if (!expected.ok()) return Fail(std::string(expected.status().message()));
    for (size_t i = 0; i < inputs->size() && i < input_types.size(); ++i) {
      (*inputs)[i] = AsType((*inputs)[i], input_types[i]);
    }
    for (size_t i = 0; i < expected->size() && i < output_types.size(); ++i) {
      (*expected)[i] = AsType((*expected)[i], output_types[i]);
    }
    std::vector<Tensor> outputs;
    absl::Status status = (*session)->Run(*inputs, &outputs);
    if (!status.ok()) return Fail(std::string(status.message()));
    if (outputs.size() != expected->size()) {
      return Fail(StrCat(outputs.size(), " outputs, expected ", expected->size()));
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string mismatch = Compare(outputs[i], (*expected)[i]);
      if (!mismatch.empty()) {
        return Fail(StrCat(entry.path().filename().string(), " output ", i, ": ", mismatch));
      }
    }
  }
  if (!any) return Fail("no test_data_set directories");
  return NodeTestResult{NodeTestOutcome::kPassed, ""};
}

}  // namespace brigade::engine::onnx
