// libFuzzer target for the gRPC request decoder: any byte string that parses as a
// ModelInferRequest must decode to a well-formed InferRequest or to an error, never crash, hang
// or read out of bounds; and every decoded tensor must agree with its shape and survive a round
// trip through the response encoder. Build and run: see CMakeLists.txt (BRIGADE_FUZZ).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/tensor.h"
#include "google/protobuf/stubs/logging.h"
#include "protocol/grpc/infer_messages.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckTensor(const brigade::Tensor& tensor) {
  if (tensor.dtype() == brigade::DataType::kBytes) {
    Check(brigade::ValidateSerializedBytes(tensor.bytes(), tensor.num_elements()).ok());
    Check(tensor.StringValues().ok());
  } else {
    Check(tensor.byte_size() ==
          static_cast<size_t>(tensor.num_elements()) * brigade::DataTypeSize(tensor.dtype()));
  }
  // Touch every byte so the sanitizers see any out-of-bounds view.
  unsigned sum = 0;
  for (std::byte b : tensor.bytes()) sum += static_cast<unsigned>(b);
  (void)sum;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Invalid UTF-8 in string fields is an ordinary parse failure here; don't log each one.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto message = std::make_shared<inference::ModelInferRequest>();
  if (!message->ParseFromArray(data, static_cast<int>(size))) return 0;
  auto request = brigade::protocol::grpc::DecodeModelInferRequest(message, 1'000'000'000);
  if (!request.ok()) return 0;

  brigade::InferResponse response;
  response.model_name = (*request)->model_name;
  for (const brigade::InferInput& input : (*request)->inputs) {
    CheckTensor(input.tensor);
    response.outputs.push_back({input.name, input.tensor, input.parameters});
  }
  inference::ModelInferResponse encoded;
  Check(brigade::protocol::grpc::EncodeModelInferResponse(response, &encoded).ok());
  Check(encoded.raw_output_contents_size() == static_cast<int>(response.outputs.size()));
  for (int i = 0; i < encoded.raw_output_contents_size(); ++i) {
    const brigade::Tensor& tensor = response.outputs[static_cast<size_t>(i)].tensor;
    Check(encoded.raw_output_contents(i).size() == tensor.byte_size());
  }
  return 0;
}
