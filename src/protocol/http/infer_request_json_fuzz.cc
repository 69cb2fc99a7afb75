// libFuzzer target for the HTTP infer request decoder (and, with what it decodes, the response
// encoder and the repository body decoders). See CMakeLists.txt for how to build and run it.
//
// Input layout: byte 0 selects options, bytes 1-2 (little-endian) the JSON header length when the
// binary extension is on; the rest is the body.
//   bit 0  send Inference-Header-Content-Length (length = bytes 1-2 modulo body size + 1)
//   bit 1  send a malformed header value instead
//   bit 2  URL version "3" instead of none

#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/http/body_buffer.h"
#include "protocol/http/infer_request_json.h"
#include "protocol/http/infer_response_json.h"
#include "protocol/http/repository_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brigade;
  using namespace brigade::protocol::http;
  if (size < 3) return 0;
  const uint8_t flags = data[0];
  const size_t length_seed = data[1] | (static_cast<size_t>(data[2]) << 8);
  const std::string_view body_bytes(reinterpret_cast<const char*>(data + 3), size - 3);

  HttpInferInput input;
  input.model_name = "fuzz";
  input.model_version = (flags & 4) != 0 ? "3" : "";
  input.body = BodyBuffer::FromString(body_bytes);
  input.arrival_ns = 1;
  std::string header_value;
  if ((flags & 1) != 0) {
    header_value = (flags & 2) != 0 ? std::string("1x")
                                    : std::to_string(length_seed % (body_bytes.size() + 1));
    input.header_length = header_value;
  }

  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(input);
  if (request.ok()) {
    // Echo the decoded inputs as outputs, once as JSON and once as binary.
    InferResponse response;
    response.model_name = "fuzz";
    response.model_version = "1";
    response.id = (*request)->id;
    response.parameters = (*request)->parameters;
    for (const InferInput& in : (*request)->inputs) {
      response.outputs.push_back({in.name, in.tensor, in.parameters});
    }
    (void)EncodeInferResponse(response, OutputEncoding());
    (*request)->all_outputs_binary = true;
    (void)EncodeInferResponse(response, OutputEncoding::FromRequest(**request));
  }
  (void)DecodeRepositoryIndexRequest(*input.body);
  (void)DecodeLoadModelRequest("fuzz", *input.body);
  (void)DecodeUnloadModelRequest(*input.body);
  return 0;
}
