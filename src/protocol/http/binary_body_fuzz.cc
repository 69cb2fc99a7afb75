// libFuzzer target for Triton's binary tensor extension as the HTTP transport hands it to the
// codec: the `Inference-Header-Content-Length` value, a body placed the way the transport places
// it (aligned at the header's offset, or appended chunk by chunk as a chunked upload is), the raw
// binary request form (header 0, the model's one input from its metadata), and what the client
// reads back. See CMakeLists.txt for how to build and run it; the seeds are in
// tests/fuzz/protocol_http_binary_body_fuzz/ (written by tests/fuzz/write_seeds.cc).
//
// Input layout: 8 option bytes, then the header value's bytes (mode 3 only), then the body.
//   byte 0  bits 0-1  Inference-Header-Content-Length: 0 none, 1 the decimal length from bytes
//                     4-5 (modulo body size + 1), 2 "0" (raw binary request), 3 the text that
//                     follows the option bytes (byte 6 bytes of it, modulo 24)
//           bit 2     the model has one input (bytes 1-3), so a raw binary request can name it
//           bit 3     the body arrives chunked: appended in pieces (sizes from byte 7), as the
//                     transport does without Content-Length, instead of placed at the header's
//                     offset
//           bit 4     URL version "1"
//           bit 5     the body is also decoded as an infer *response* (the client's side)
//   byte 1  the raw input's data type (modulo the number of types, 0 = INVALID)
//   byte 2  the raw input's rank (modulo 5)
//   byte 3  its dims, two bits each: -1, 1, 2, 0
//   bytes 4-5  length seed (little-endian)
//   byte 6  header text length (mode 3)
//   byte 7  chunk size seed (bit 3)
//
// Oracles beyond the sanitizers: every tensor a request decodes to is read in full; re-encoded by
// the client's encoder with binary inputs it decodes to the same tensors; echoed as binary outputs
// it reads back, on the client's side, as the same tensors. A mismatch aborts.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/strings.h"
#include "core/tensor.h"
#include "protocol/http/body_buffer.h"
#include "protocol/http/infer_request_json.h"
#include "protocol/http/infer_response_json.h"
#include "protocol/http/json_dom_reader.h"
#include "protocol/infer_spec.h"
#include "protocol/metadata.h"
#include "simdjson.h"

namespace {

using namespace brigade;
using namespace brigade::protocol::http;

constexpr size_t kOptionBytes = 8;

[[noreturn]] void Fail(const char* what, std::string_view name) {
  std::fprintf(stderr, "binary body fuzz: %s (tensor '%.*s')\n", what,
               static_cast<int>(name.size()), name.data());
  std::abort();
}

// Touches every byte (so ASan sees a tensor that points past its buffer) and checks BYTES
// elements' framing.
void ReadAll(const InferInput& input) {
  const Tensor& tensor = input.tensor;
  volatile uint8_t sum = 0;
  for (std::byte b : tensor.bytes()) sum = sum + static_cast<uint8_t>(b);
  if (tensor.dtype() == DataType::kBytes) {
    if (!tensor.StringValues().ok()) Fail("a decoded BYTES tensor does not parse", input.name);
  } else if (tensor.byte_size() !=
             static_cast<size_t>(tensor.num_elements()) * DataTypeSize(tensor.dtype())) {
    Fail("a decoded tensor's byte size does not match its shape", input.name);
  }
}

void ExpectSame(const Tensor& want, const Tensor& got, std::string_view name) {
  if (want.dtype() != got.dtype()) Fail("data type changed in a round trip", name);
  if (want.shape() != got.shape()) Fail("shape changed in a round trip", name);
  if (want.byte_size() != got.byte_size() ||
      (want.byte_size() > 0 && std::memcmp(want.data(), got.data(), want.byte_size()) != 0)) {
    Fail("bytes changed in a round trip", name);
  }
}

// The client's encoder with binary inputs, decoded again by the server's decoder.
void RoundTripRequest(const InferRequest& request) {
  protocol::InferSpec spec;
  spec.id = request.id;
  spec.inputs = request.inputs;
  spec.binary_inputs = true;
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  if (!EncodeInferRequest(spec, &json, &parts).ok()) return;  // e.g. an id the writer refuses
  std::string body = json;
  for (std::span<const std::byte> part : parts) {
    body.append(reinterpret_cast<const char*>(part.data()), part.size());
  }
  const std::string header_length = std::to_string(json.size());
  HttpInferInput again;
  again.model_name = "fuzz";
  again.header_length = header_length;
  again.body = BodyBuffer::FromString(body, json.size());
  absl::StatusOr<std::unique_ptr<InferRequest>> decoded = DecodeInferRequest(again);
  if (!decoded.ok()) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(decoded.status().message().size()),
                 decoded.status().message().data());
    Fail("a re-encoded request does not decode", "");
  }
  if ((*decoded)->inputs.size() != request.inputs.size()) Fail("inputs lost in a round trip", "");
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    ExpectSame(request.inputs[i].tensor, (*decoded)->inputs[i].tensor, request.inputs[i].name);
  }
}

// The inputs echoed as binary outputs, read back by the client's decoder.
void RoundTripResponse(const InferRequest& request, simdjson::dom::parser& parser) {
  InferResponse response;
  response.model_name = "fuzz";
  response.model_version = "1";
  response.id = request.id;
  for (const InferInput& in : request.inputs) response.outputs.push_back({in.name, in.tensor, {}});
  InferRequest asks_binary;
  asks_binary.all_outputs_binary = true;
  absl::StatusOr<EncodedInferResponse> encoded =
      EncodeInferResponse(response, OutputEncoding::FromRequest(asks_binary));
  if (!encoded.ok()) Fail("binary outputs do not encode", "");
  // As the client receives it: JSON header, binary section, then the receive buffer's padding.
  auto received = std::make_shared<std::string>(encoded->json);
  for (std::span<const std::byte> part : encoded->binary_parts) {
    received->append(reinterpret_cast<const char*>(part.data()), part.size());
  }
  const size_t body_bytes = received->size();
  received->append(kJsonPaddingBytes, '\0');
  const size_t json_bytes = encoded->json.size();
  InferResponse decoded;
  const absl::Status status = DecodeInferResponse(
      parser, std::string_view(received->data(), json_bytes),
      std::span<std::byte>(reinterpret_cast<std::byte*>(received->data()) + json_bytes,
                           body_bytes - json_bytes),
      received, &decoded);
  if (!status.ok()) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(status.message().size()),
                 status.message().data());
    Fail("an encoded binary response does not decode", "");
  }
  if (decoded.outputs.size() != response.outputs.size()) Fail("outputs lost in a round trip", "");
  for (size_t i = 0; i < response.outputs.size(); ++i) {
    ExpectSame(response.outputs[i].tensor, decoded.outputs[i].tensor, response.outputs[i].name);
  }
}

// The body as the transport builds it.
std::shared_ptr<BodyBuffer> PlaceBody(std::string_view body, bool chunked, uint8_t chunk_seed,
                                      std::optional<std::string_view> header_length) {
  if (!chunked) {
    // KServeHttpHandler::AlignedBodyOffset: the header's value when it parses, else 0.
    size_t offset = 0;
    if (!header_length || !ParseInteger(*header_length, &offset)) offset = 0;
    return BodyBuffer::FromString(body, offset);
  }
  std::shared_ptr<BodyBuffer> buffer = BodyBuffer::Allocate(0);
  const size_t chunk = 1 + chunk_seed % 97;
  for (size_t at = 0; at < body.size(); at += chunk) {
    const std::string_view piece = body.substr(at, chunk);
    if (!buffer->Append(std::as_bytes(std::span(piece.data(), piece.size())), size_t{1} << 20)) {
      Fail("a chunk within the limit was refused", "");
    }
  }
  if (buffer->view() != body) Fail("chunks appended out of order", "");
  return buffer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kOptionBytes) return 0;
  const uint8_t flags = data[0];
  const int header_mode = flags & 3;
  std::string_view rest(reinterpret_cast<const char*>(data + kOptionBytes), size - kOptionBytes);

  std::string header_value;
  if (header_mode == 3) {
    const size_t length = std::min<size_t>(data[6] % 24, rest.size());
    header_value = std::string(rest.substr(0, length));
    rest.remove_prefix(length);
  }
  const std::string_view body = rest;
  if (header_mode == 1) {
    const size_t seed = data[4] | (static_cast<size_t>(data[5]) << 8);
    header_value = std::to_string(seed % (body.size() + 1));
  } else if (header_mode == 2) {
    header_value = "0";
  }
  std::optional<std::string_view> header_length;
  if (header_mode != 0) header_length = header_value;

  protocol::TensorMetadata raw;
  raw.name = "RAW";
  raw.dtype = static_cast<DataType>(data[1] % kNumDataTypes);
  const int rank = data[2] % 5;
  for (int i = 0; i < rank; ++i) {
    static constexpr int64_t kDims[] = {-1, 1, 2, 0};
    raw.shape.push_back(kDims[(data[3] >> (2 * i)) & 3]);
  }

  HttpInferInput input;
  input.model_name = "fuzz";
  input.model_version = (flags & 16) != 0 ? "1" : "";
  input.header_length = header_length;
  input.body = PlaceBody(body, (flags & 8) != 0, data[7], header_length);
  input.arrival_ns = 1;
  if ((flags & 4) != 0) input.raw_input = &raw;

  static simdjson::dom::parser* parser = new simdjson::dom::parser();
  absl::StatusOr<std::unique_ptr<InferRequest>> request = DecodeInferRequest(input);
  if (request.ok()) {
    for (const InferInput& in : (*request)->inputs) ReadAll(in);
    RoundTripRequest(**request);
    RoundTripResponse(**request, *parser);
  }

  if ((flags & 32) != 0) {
    // A hostile server's answer: the header splits the body into JSON and binary section.
    size_t json_bytes = body.size();
    if (header_length && (!ParseInteger(*header_length, &json_bytes) || json_bytes > body.size())) {
      return 0;  // the client refuses these before decoding (http_client.cc)
    }
    auto received = std::make_shared<std::string>(body);
    received->append(kJsonPaddingBytes, '\0');
    InferResponse response;
    const absl::Status status = DecodeInferResponse(
        *parser, std::string_view(received->data(), json_bytes),
        std::span<std::byte>(reinterpret_cast<std::byte*>(received->data()) + json_bytes,
                             body.size() - json_bytes),
        received, &response);
    if (status.ok()) {
      for (const InferOutput& out : response.outputs) ReadAll({out.name, out.tensor, {}});
    }
  }
  return 0;
}
