// The Fashion-MNIST demo classifiers served by models/fashion_mnist_onnx must compute what ONNX
// Runtime computes: outputs within 1e-5 absolute + 1e-4 relative of the reference outputs
// committed in testdata/<model>.ort/ (regenerate with testdata/make_references.sh).

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "engine/onnx/onnx_backend.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace brigade::engine {
namespace {

struct Reference {
  Tensor input;
  Tensor output;
};

Tensor ReadRaw(const std::string& path, const Shape& shape) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto t = Tensor::Copy(DataType::kFp32, shape, std::as_bytes(std::span(bytes)));
  EXPECT_TRUE(t.ok()) << path << ": " << t.status();
  return t.ok() ? *t : Tensor();
}

// Reads the one-input, one-output dump ort-run.js wrote for `model`.
Reference ReadReference(const std::string& model) {
  const std::string dir = std::string(BRIGADE_ONNX_TESTDATA_DIR) + "/" + model + ".ort";
  simdjson::dom::parser parser;
  simdjson::dom::element manifest = parser.load(dir + "/manifest.json");
  Reference ref;
  for (const char* side : {"inputs", "outputs"}) {
    simdjson::dom::element entry = manifest[side].at(0);
    Shape shape;
    for (simdjson::dom::element d : entry["shape"].get_array()) shape.push_back(int64_t(d));
    const std::string_view file_name = entry["file"];
    const std::string file(file_name);
    (std::string(side) == "inputs" ? ref.input : ref.output) = ReadRaw(dir + "/" + file, shape);
  }
  return ref;
}

void ExpectClose(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = got.values<float>();
  const auto w = want.values<float>();
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_LE(std::abs(g[i] - w[i]), 1e-5f + 1e-4f * std::abs(w[i]))
        << "element " << i << ": " << g[i] << " vs ONNX Runtime's " << w[i];
  }
}

class DemoModelsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DemoModelsTest, MatchesOnnxRuntimeForWholeBatchesAndSingleRows) {
  const std::string model = GetParam();
  const Reference ref = ReadReference(model);
  OnnxBackend backend;
  ModelLoadOptions options;
  options.model_name = model;
  options.model_path = std::string(BRIGADE_ONNX_TESTDATA_DIR) + "/" + model + ".onnx";
  options.max_batch_size = 32;
  auto loaded = backend.Load(options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (int threads : {1, 2}) {
    InstanceOptions instance_options;
    instance_options.intra_op_threads = threads;
    auto instance = (*loaded)->CreateInstance(instance_options);
    ASSERT_TRUE(instance.ok()) << instance.status();
    std::vector<Tensor> outputs;
    ASSERT_TRUE((*instance)->Execute({&ref.input, 1}, &outputs).ok());
    ASSERT_EQ(outputs.size(), 1u);
    ExpectClose(outputs[0], ref.output);
    // Row by row (batch 1): the same numbers as in the batch.
    for (int64_t row = 0; row < ref.input.shape()[0]; ++row) {
      const Tensor input = *ref.input.SliceRows(row, 1);
      ASSERT_TRUE((*instance)->Execute({&input, 1}, &outputs).ok());
      ExpectClose(outputs[0], *ref.output.SliceRows(row, 1));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FashionMnist, DemoModelsTest,
                         ::testing::Values("fashion_mnist", "fashion_mnist_small"));

}  // namespace
}  // namespace brigade::engine
