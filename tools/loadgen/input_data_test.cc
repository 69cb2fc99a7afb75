#include "tools/loadgen/input_data.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "testing/temp_repository.h"

namespace brigade::loadgen {
namespace {

protocol::TensorMetadata Input(std::string name, DataType dtype, Shape shape) {
  return {.name = std::move(name),
          .dtype = dtype,
          .shape = std::move(shape),
          .datatype = std::string(DataTypeName(dtype))};
}

protocol::ModelMetadata Model(std::vector<protocol::TensorMetadata> inputs) {
  protocol::ModelMetadata metadata;
  metadata.name = "m";
  metadata.inputs = std::move(inputs);
  return metadata;
}

std::string FloatBytes(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

// A version 1.0 .npy file holding FP32 `values` with `shape_text` ("(16,)").
std::string FloatNpy(std::string_view shape_text, std::vector<float> values) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(shape_text) + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string file("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size()));
  file.push_back(0);
  return file + header + FloatBytes(std::move(values));
}

TEST(InputDataTest, RandomInputsFillTheBatchDimension) {
  InputOptions options;
  options.batch_size = 4;
  absl::StatusOr<std::vector<Sample>> samples =
      BuildSamples(Model({Input("image", DataType::kFp32, {-1, 1, 28, 28})}), options);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  const Tensor& image = (*samples)[0][0].tensor;
  EXPECT_EQ(image.shape(), (Shape{4, 1, 28, 28}));
  for (float v : image.values<float>()) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 1.0f);
  }
}

TEST(InputDataTest, VariableDimensionsComeFromShapesWithOrWithoutTheBatchDimension) {
  const protocol::TensorMetadata input = Input("INPUT0", DataType::kFp32, {-1, -1});
  InputOptions options;
  absl::Status missing = ResolveShape(input, options, std::nullopt).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("--shape INPUT0"), std::string::npos) << missing.message();

  options.shapes["INPUT0"] = {16};
  EXPECT_EQ(*ResolveShape(input, options, std::nullopt), (Shape{1, 16}));
  options.shapes["INPUT0"] = {2, 16};
  EXPECT_EQ(*ResolveShape(input, options, std::nullopt), (Shape{2, 16}));
}

TEST(InputDataTest, AShapeThatDoesNotFitTheModelIsRefused) {
  InputOptions options;
  options.shapes["INPUT0"] = {8};
  absl::Status status =
      ResolveShape(Input("INPUT0", DataType::kFp32, {-1, 16}), options, std::nullopt).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  options.shapes["INPUT0"] = {1, 2, 3, 4};
  EXPECT_FALSE(
      ResolveShape(Input("INPUT0", DataType::kFp32, {-1, 16}), options, std::nullopt).ok());
}

TEST(InputDataTest, RawFilesDeduceTheOneUnknownDimensionFromTheirSize) {
  testing::TempRepository dir;
  dir.WriteFile("in.bin", FloatBytes(std::vector<float>(16, 0.5f)));
  InputOptions options;
  options.files["INPUT0"] = dir.path() + "/in.bin";
  absl::StatusOr<std::vector<Sample>> samples =
      BuildSamples(Model({Input("INPUT0", DataType::kFp32, {-1, -1})}), options);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ((*samples)[0][0].tensor.shape(), (Shape{1, 16}));
  EXPECT_EQ((*samples)[0][0].tensor.values<float>()[15], 0.5f);
}

TEST(InputDataTest, NpyWithoutTheBatchDimensionIsRepeatedToTheBatchSize) {
  testing::TempRepository dir;
  dir.WriteFile("x.npy", FloatNpy("(2,)", {1.0f, 2.0f}));
  InputOptions options;
  options.batch_size = 3;
  options.files["x"] = dir.path() + "/x.npy";
  absl::StatusOr<std::vector<Sample>> samples =
      BuildSamples(Model({Input("x", DataType::kFp32, {-1, 2})}), options);
  ASSERT_TRUE(samples.ok()) << samples.status();
  const Tensor& x = (*samples)[0][0].tensor;
  EXPECT_EQ(x.shape(), (Shape{3, 2}));
  EXPECT_EQ(x.values<float>()[4], 1.0f);
  EXPECT_EQ(x.values<float>()[5], 2.0f);
}

TEST(InputDataTest, FilesMustMatchTheModelsTypeAndName) {
  testing::TempRepository dir;
  dir.WriteFile("x.npy", FloatNpy("(2,)", {1.0f, 2.0f}));
  InputOptions options;
  options.files["x"] = dir.path() + "/x.npy";
  EXPECT_FALSE(BuildSamples(Model({Input("x", DataType::kInt32, {-1, 2})}), options).ok());
  options.files = {{"nope", dir.path() + "/x.npy"}};
  absl::Status status =
      BuildSamples(Model({Input("x", DataType::kFp32, {-1, 2})}), options).status();
  EXPECT_NE(status.message().find("'nope'"), std::string::npos);
}

TEST(InputDataTest, DatasetFolderGivesOneSamplePerFileInNameOrder) {
  testing::TempRepository dir;
  dir.WriteFile("data/b.npy", FloatNpy("(2,)", {3.0f, 4.0f}));
  dir.WriteFile("data/a.npy", FloatNpy("(2,)", {1.0f, 2.0f}));
  dir.WriteFile("data/README", "not a sample");
  InputOptions options;
  options.directory = dir.path() + "/data";
  absl::StatusOr<std::vector<Sample>> samples =
      BuildSamples(Model({Input("x", DataType::kFp32, {-1, 2})}), options);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0][0].tensor.values<float>()[0], 1.0f);
  EXPECT_EQ((*samples)[1][0].tensor.shape(), (Shape{1, 2}));
}

TEST(InputDataTest, DatasetSubfoldersHoldOneFilePerInput) {
  testing::TempRepository dir;
  for (const char* sample : {"s0", "s1"}) {
    dir.WriteFile(std::string("data/") + sample + "/A.npy", FloatNpy("(2,)", {1.0f, 2.0f}));
    dir.WriteFile(std::string("data/") + sample + "/B.bin", FloatBytes({5.0f, 6.0f}));
  }
  InputOptions options;
  options.directory = dir.path() + "/data";
  const protocol::ModelMetadata model =
      Model({Input("A", DataType::kFp32, {-1, 2}), Input("B", DataType::kFp32, {-1, 2})});
  absl::StatusOr<std::vector<Sample>> samples = BuildSamples(model, options);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[1][1].name, "B");
  EXPECT_EQ((*samples)[1][1].tensor.values<float>()[1], 6.0f);

  dir.Remove("data/s1/B.bin");
  absl::Status status = BuildSamples(model, options).status();
  EXPECT_NE(status.message().find("B.npy or B.bin"), std::string::npos) << status.message();
}

TEST(InputDataTest, RandomSamplesDifferAndStringsHaveTheRequestedLength) {
  InputOptions options;
  options.random_samples = 3;
  options.string_length = 5;
  absl::StatusOr<std::vector<Sample>> samples = BuildSamples(
      Model({Input("x", DataType::kInt32, {-1, 8}), Input("s", DataType::kBytes, {-1, 2})}),
      options);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_NE(std::memcmp((*samples)[0][0].tensor.data(), (*samples)[1][0].tensor.data(), 32), 0);
  EXPECT_EQ((*samples)[2][1].tensor.StringValues()->at(1).size(), 5u);
}

}  // namespace
}  // namespace brigade::loadgen
