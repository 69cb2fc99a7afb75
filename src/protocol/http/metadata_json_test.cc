#include "protocol/http/metadata_json.h"

#include "gtest/gtest.h"

namespace brigade::protocol::http {
namespace {

TEST(MetadataEncoderTest, ServerMetadata) {
  protocol::ServerMetadata metadata{"brigade", "0.1.0", {"binary_tensor_data", "statistics"}};
  EXPECT_EQ(
      EncodeServerMetadata(metadata),
      R"({"name":"brigade","version":"0.1.0","extensions":["binary_tensor_data","statistics"]})");
}

TEST(MetadataEncoderTest, ModelMetadataWithVariableDims) {
  protocol::ModelMetadata metadata;
  metadata.name = "resnet";
  metadata.versions = {"1", "2"};
  metadata.platform = "onnxruntime_onnx";
  metadata.inputs = {{"x", DataType::kFp32, {-1, 3, 224, 224}, ""}};
  metadata.outputs = {{"y", DataType::kBytes, {-1}, ""}};
  EXPECT_EQ(EncodeModelMetadata(metadata),
            R"({"name":"resnet","versions":["1","2"],"platform":"onnxruntime_onnx",)"
            R"("inputs":[{"name":"x","datatype":"FP32","shape":[-1,3,224,224]}],)"
            R"("outputs":[{"name":"y","datatype":"BYTES","shape":[-1]}]})");
}

TEST(MetadataEncoderTest, ErrorEscapesTheMessage) {
  EXPECT_EQ(EncodeError("model \"x\" not found"), R"({"error":"model \"x\" not found"})");
}

}  // namespace
}  // namespace brigade::protocol::http
