// Writes the fuzzers' seed corpora, tests/fuzz/<fuzzer>/<seed>: small valid inputs of every
// kind each decoder accepts, so fuzzing starts deep in the decoders instead of at their first
// syntax check. The gRPC requests are built with the generated protobuf classes and the cached
// values and invalidation messages with the cache's own encoders, so a format change is one
// regeneration away (see tests/fuzz/README.md):
//
//   ninja -C build-sanitize fuzz_write_seeds && build-sanitize/tests/fuzz/fuzz_write_seeds
//   tests/fuzz
//
// Deterministic: no clocks or randomness, so an unchanged format rewrites identical files.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "cache/cached_value.h"
#include "cache/invalidation.h"
#include "core/data_type.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/tensor.h"
#include "frontend/http/content_coding.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "protocol/grpc_service.pb.h"

namespace brigade {
namespace {

namespace fs = std::filesystem;

template <typename T>
T Must(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "write_seeds: %s\n", std::string(value.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(value);
}

void Write(const fs::path& dir, std::string_view name, std::string_view bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "write_seeds: cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

template <typename T>
std::string RawBytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// BYTES elements as the binary formats carry them: 4-byte little-endian length, then the bytes.
std::string LengthPrefixed(const std::vector<std::string>& values) {
  std::string bytes;
  for (const std::string& value : values) {
    const auto size = static_cast<uint32_t>(value.size());
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<char>(size >> shift));
    bytes += value;
  }
  return bytes;
}

// ---- protocol_http_infer_request_json_fuzz: flags byte, 2-byte header length, body. ----

constexpr uint8_t kSendHeaderLength = 1;
constexpr uint8_t kVersionedUrl = 4;

std::string HttpInput(uint8_t flags, size_t header_length, std::string_view body) {
  std::string input;
  input.push_back(static_cast<char>(flags));
  input.push_back(static_cast<char>(header_length & 0xff));
  input.push_back(static_cast<char>((header_length >> 8) & 0xff));
  input += body;
  return input;
}

void WriteHttpSeeds(const fs::path& dir) {
  Write(dir, "json_fp32",
        HttpInput(0, 0,
                  R"({"id":"seed-1","inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"FP32",)"
                  R"("data":[0.5,-1.25,3e2,0]}],"outputs":[{"name":"OUTPUT0"}]})"));
  Write(dir, "json_every_type",
        HttpInput(0, 0,
                  R"({"inputs":[)"
                  R"({"name":"b","shape":[2],"datatype":"BOOL","data":[true,false]},)"
                  R"({"name":"i8","shape":[2],"datatype":"INT8","data":[-128,127]},)"
                  R"({"name":"u8","shape":[2],"datatype":"UINT8","data":[0,255]},)"
                  R"({"name":"i16","shape":[1],"datatype":"INT16","data":[-32768]},)"
                  R"({"name":"u16","shape":[1],"datatype":"UINT16","data":[65535]},)"
                  R"({"name":"i32","shape":[1],"datatype":"INT32","data":[-2147483648]},)"
                  R"({"name":"u32","shape":[1],"datatype":"UINT32","data":[4294967295]},)"
                  R"({"name":"i64","shape":[1],"datatype":"INT64","data":[-9223372036854775808]},)"
                  R"({"name":"u64","shape":[1],"datatype":"UINT64","data":[18446744073709551615]},)"
                  R"({"name":"f64","shape":[2],"datatype":"FP64","data":[1e-300,-0.0]},)"
                  R"({"name":"s","shape":[2],"datatype":"BYTES","data":["hello","\u00e9\n"]}]})"));
  Write(dir, "json_nested_data",
        HttpInput(0, 0,
                  R"({"inputs":[{"name":"x","shape":[2,2],"datatype":"INT32",)"
                  R"("data":[[1,2],[3,4]]}]})"));
  Write(dir, "json_parameters",
        HttpInput(0, 0,
                  R"({"id":"p","parameters":{"priority":2,"timeout":1000,)"
                  R"("binary_data_output":false,"tag":"a","flag":true,"ratio":0.25},)"
                  R"("inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1],)"
                  R"("parameters":{"note":"n"}}],)"
                  R"("outputs":[{"name":"y","parameters":{"binary_data":true}},{"name":"z"}]})"));
  Write(dir, "json_versioned_url",
        HttpInput(kVersionedUrl, 0,
                  R"({"inputs":[{"name":"x","shape":[0],"datatype":"FP32","data":[]}]})"));

  // Triton's binary extension: JSON header, then each binary input's bytes in input order.
  {
    const std::string header =
        R"({"inputs":[{"name":"a","shape":[2,2],"datatype":"FP32",)"
        R"("parameters":{"binary_data_size":16}},)"
        R"({"name":"b","shape":[3],"datatype":"INT32","data":[1,2,3]},)"
        R"({"name":"c","shape":[2],"datatype":"INT64","parameters":{"binary_data_size":16}}],)"
        R"("outputs":[{"name":"y","parameters":{"binary_data":true}}]})";
    const std::string body =
        header + RawBytes<float>({1.0f, -2.0f, 0.5f, 8.0f}) + RawBytes<int64_t>({-1, 1LL << 40});
    Write(dir, "binary_fp32_int64", HttpInput(kSendHeaderLength, header.size(), body));
  }
  {
    const std::string strings = LengthPrefixed({"ab", "", std::string("\xff\0z", 3)});
    const std::string header = R"({"inputs":[{"name":"s","shape":[3],"datatype":"BYTES",)"
                               R"("parameters":{"binary_data_size":)" +
                               std::to_string(strings.size()) +
                               R"(}}],"parameters":{"binary_data_output":true}})";
    Write(dir, "binary_bytes", HttpInput(kSendHeaderLength, header.size(), header + strings));
  }
  {
    const std::string header =
        R"({"inputs":[{"name":"h","shape":[2],"datatype":"FP16",)"
        R"("parameters":{"binary_data_size":4}},)"
        R"({"name":"u","shape":[3],"datatype":"UINT8","parameters":{"binary_data_size":3}}]})";
    const std::string body = header + RawBytes<uint16_t>({0x3c00, 0xc000}) + "\x01\x02\x03";
    Write(dir, "binary_fp16_uint8", HttpInput(kSendHeaderLength, header.size(), body));
  }

  {
    // Regression: an unclosed header whose binary section starts with ',' (the decoder parsed
    // the header in place, and simdjson read the binary bytes as the document's continuation).
    const std::string header = R"({"inputs":[{"name":"a","shape":[2],"datatype":"FP32",)"
                               R"("parameters":{"binary_data_size":8}})";
    const std::string body = header + R"(,{"name":"b"}]})" + RawBytes<float>({1, 2});
    Write(dir, "binary_unclosed_header", HttpInput(kSendHeaderLength, header.size(), body));
  }

  // The repository bodies the fuzzer decodes from the same bytes.
  Write(dir, "repository_index", HttpInput(0, 0, R"({"ready":true})"));
  Write(dir, "repository_load",
        HttpInput(0, 0,
                  R"({"parameters":{"config":"{\"backend\":\"builtin\",\"max_batch_size\":8}"}})"));
  Write(dir, "repository_unload", HttpInput(0, 0, R"({"parameters":{"unload_dependents":true}})"));
}

// ---- protocol_http_binary_body_fuzz: 8 option bytes (see the source), header text, body. ----

constexpr uint8_t kHeaderFromSeed = 1;
constexpr uint8_t kHeaderZero = 2;
constexpr uint8_t kHeaderText = 3;
constexpr uint8_t kHasRawInput = 4;
constexpr uint8_t kChunked = 8;
constexpr uint8_t kBodyVersioned = 16;
constexpr uint8_t kAlsoResponse = 32;

struct BinaryBodyOptions {
  uint8_t flags = 0;
  DataType raw_dtype = DataType::kInvalid;
  // Dims of the raw input: -1, 1, 2 or 0 each.
  std::vector<int64_t> raw_dims{};
  size_t header_length = 0;
  std::string header_text{};
  uint8_t chunk_seed = 0;
};

std::string BinaryBodyInput(const BinaryBodyOptions& options, std::string_view body) {
  uint8_t dims = 0;
  for (size_t i = 0; i < options.raw_dims.size(); ++i) {
    const int64_t dim = options.raw_dims[i];
    const uint8_t code = dim == -1 ? 0 : dim == 1 ? 1 : dim == 2 ? 2 : 3;
    dims |= static_cast<uint8_t>(code << (2 * i));
  }
  std::string input;
  input.push_back(static_cast<char>(options.flags));
  input.push_back(static_cast<char>(options.raw_dtype));
  input.push_back(static_cast<char>(options.raw_dims.size()));
  input.push_back(static_cast<char>(dims));
  input.push_back(static_cast<char>(options.header_length & 0xff));
  input.push_back(static_cast<char>((options.header_length >> 8) & 0xff));
  input.push_back(static_cast<char>(options.header_text.size()));
  input.push_back(static_cast<char>(options.chunk_seed));
  input += options.header_text;
  input += body;
  return input;
}

void WriteBinaryBodySeeds(const fs::path& dir) {
  const std::string header =
      R"({"id":"b1","inputs":[{"name":"a","shape":[2,2],"datatype":"FP32",)"
      R"("parameters":{"binary_data_size":16}},)"
      R"({"name":"b","shape":[3],"datatype":"INT32","data":[1,2,3]},)"
      R"({"name":"c","shape":[2],"datatype":"INT64","parameters":{"binary_data_size":16}}],)"
      R"("outputs":[{"name":"y","parameters":{"binary_data":true}}]})";
  const std::string body =
      header + RawBytes<float>({1.0f, -2.0f, 0.5f, 8.0f}) + RawBytes<int64_t>({-1, 1LL << 40});
  Write(dir, "binary_placed_aligned",
        BinaryBodyInput({.flags = kHeaderFromSeed, .header_length = header.size()}, body));
  Write(dir, "binary_chunked",
        BinaryBodyInput(
            {.flags = kHeaderFromSeed | kChunked, .header_length = header.size(), .chunk_seed = 6},
            body));
  // The header's value as the client sent it, not as a number: a sign, blanks, an overflow.
  Write(dir, "header_text_plus",
        BinaryBodyInput({.flags = kHeaderText, .header_text = "+" + std::to_string(header.size())},
                        body));
  Write(dir, "header_text_overflow",
        BinaryBodyInput({.flags = kHeaderText, .header_text = "18446744073709551616"}, body));
  {
    const std::string strings = LengthPrefixed({"ab", "", std::string("\xff\0z", 3)});
    const std::string bytes_header = R"({"inputs":[{"name":"s","shape":[3],"datatype":"BYTES",)"
                                     R"("parameters":{"binary_data_size":)" +
                                     std::to_string(strings.size()) +
                                     R"(}}],"parameters":{"binary_data_output":true}})";
    Write(dir, "binary_bytes",
          BinaryBodyInput(
              {.flags = kHeaderFromSeed | kBodyVersioned, .header_length = bytes_header.size()},
              bytes_header + strings));
  }
  // Triton's raw binary request (header 0): the body is the model's one input.
  Write(
      dir, "raw_fp32_variable_rows",
      BinaryBodyInput(
          {.flags = kHeaderZero | kHasRawInput, .raw_dtype = DataType::kFp32, .raw_dims = {-1, 2}},
          RawBytes<float>({1, 2, 3, 4, 5, 6})));
  Write(dir, "raw_bytes_image",
        BinaryBodyInput(
            {.flags = kHeaderZero | kHasRawInput, .raw_dtype = DataType::kBytes, .raw_dims = {1}},
            std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)));
  Write(
      dir, "raw_int8_scalar",
      BinaryBodyInput({.flags = kHeaderZero | kHasRawInput, .raw_dtype = DataType::kInt8}, "\x7f"));
  Write(dir, "raw_without_input",
        BinaryBodyInput({.flags = kHeaderZero}, RawBytes<int32_t>({1, 2})));
  // The client's side: a binary response as a server sends it.
  {
    const std::string response_header =
        R"({"model_name":"m","model_version":"1","outputs":[)"
        R"({"name":"y","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}},)"
        R"({"name":"s","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":6}},)"
        R"({"name":"j","datatype":"INT32","shape":[2],"data":[7,8]}]})";
    Write(dir, "response_binary",
          BinaryBodyInput(
              {.flags = kHeaderFromSeed | kAlsoResponse, .header_length = response_header.size()},
              response_header + RawBytes<float>({0.25f, 4}) + LengthPrefixed({"hi"})));
  }
  Write(dir, "json_only",
        BinaryBodyInput({.flags = kAlsoResponse},
                        R"({"inputs":[{"name":"x","shape":[1],"datatype":"FP64","data":[2.5]}]})"));
}

// ---- protocol_grpc_infer_messages_fuzz: a serialized inference.ModelInferRequest. ----

inference::ModelInferRequest::InferInputTensor* AddInput(inference::ModelInferRequest* request,
                                                         std::string_view name,
                                                         std::string_view datatype,
                                                         std::vector<int64_t> shape) {
  auto* input = request->add_inputs();
  input->set_name(std::string(name));
  input->set_datatype(std::string(datatype));
  for (int64_t dim : shape) input->add_shape(dim);
  return input;
}

// Deterministic: map fields (parameters) in key order, not hash order.
std::string Serialized(const inference::ModelInferRequest& request) {
  std::string bytes;
  bool ok = false;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    ok = request.SerializeToCodedStream(&coded);
  }
  if (!ok) {
    std::fprintf(stderr, "write_seeds: cannot serialize a ModelInferRequest\n");
    std::exit(1);
  }
  return bytes;
}

void WriteGrpcSeeds(const fs::path& dir) {
  {
    inference::ModelInferRequest request;
    request.set_model_name("m");
    request.set_id("seed-1");
    AddInput(&request, "INPUT0", "FP32", {2, 3});
    request.add_raw_input_contents(RawBytes<float>({1, 2, 3, 4, 5, 6}));
    request.add_outputs()->set_name("OUTPUT0");
    Write(dir, "raw_fp32", Serialized(request));
  }
  {
    inference::ModelInferRequest request;
    request.set_model_name("m");
    AddInput(&request, "b", "BOOL", {2})->mutable_contents()->add_bool_contents(true);
    request.mutable_inputs(0)->mutable_contents()->add_bool_contents(false);
    AddInput(&request, "i32", "INT32", {1})->mutable_contents()->add_int_contents(-7);
    AddInput(&request, "i16", "INT16", {1})->mutable_contents()->add_int_contents(-300);
    AddInput(&request, "i64", "INT64", {1})->mutable_contents()->add_int64_contents(1LL << 50);
    AddInput(&request, "u16", "UINT16", {1})->mutable_contents()->add_uint_contents(65535);
    AddInput(&request, "u64", "UINT64", {1})->mutable_contents()->add_uint64_contents(~0ULL);
    AddInput(&request, "f32", "FP32", {1})->mutable_contents()->add_fp32_contents(0.5f);
    AddInput(&request, "f64", "FP64", {1})->mutable_contents()->add_fp64_contents(-1e300);
    auto* strings = AddInput(&request, "s", "BYTES", {2})->mutable_contents();
    strings->add_bytes_contents("hello");
    strings->add_bytes_contents(std::string("\0\xff", 2));
    Write(dir, "typed_contents", Serialized(request));
  }
  {
    inference::ModelInferRequest request;
    request.set_model_name("m");
    AddInput(&request, "s", "BYTES", {1, 2});
    request.add_raw_input_contents(LengthPrefixed({"a", "bc"}));
    AddInput(&request, "h", "FP16", {2});
    request.add_raw_input_contents(RawBytes<uint16_t>({0x3c00, 0x7bff}));
    AddInput(&request, "bf", "BF16", {1});
    request.add_raw_input_contents(RawBytes<uint16_t>({0x3f80}));
    AddInput(&request, "u8", "UINT8", {3});
    request.add_raw_input_contents("\x01\x02\x03");
    Write(dir, "raw_bytes_fp16_bf16_uint8", Serialized(request));
  }
  {
    inference::ModelInferRequest request;
    request.set_model_name("m");
    request.set_model_version("2");
    request.set_id("p");
    auto& parameters = *request.mutable_parameters();
    parameters["priority"].set_uint64_param(1);
    parameters["timeout"].set_int64_param(1000);
    parameters["tag"].set_string_param("a");
    parameters["flag"].set_bool_param(true);
    parameters["ratio"].set_double_param(0.25);
    auto* input = AddInput(&request, "x", "INT64", {1});
    (*input->mutable_parameters())["note"].set_string_param("n");
    input->mutable_contents()->add_int64_contents(-1);
    auto* output = request.add_outputs();
    output->set_name("y");
    (*output->mutable_parameters())["binary_data"].set_bool_param(true);
    Write(dir, "parameters", Serialized(request));
  }
}

// ---- cache_cached_value_fuzz: a cached value (also without its checksum, which the fuzzer
// appends itself) or an invalidation message. ----

void WriteCacheSeeds(const fs::path& dir) {
  InferRequest request;
  request.model_name = "m";
  request.model_version = 1;
  request.inputs.push_back({"x", Must(Tensor::FromValues<float>({1}, std::vector<float>{3})), {}});
  const cache::CacheKey key = cache::KeyBuilder(cache::KeyBuilder::Options{}).Build(request, 1, "");
  constexpr int64_t kExpiresUnixMs = 1'900'000'000'000;

  auto write_value = [&](std::string_view name, const InferResponse& response) {
    const std::string value = cache::EncodeCachedValue(key, response, kExpiresUnixMs);
    Write(dir, name, value);
    // The last 8 bytes are the checksum; the fuzzer re-seals every input with a valid one.
    Write(dir, std::string(name) + "_unsealed",
          std::string_view(value).substr(0, value.size() - 8));
  };

  InferResponse response;
  response.model_name = "m";
  response.model_version = "1";
  response.parameters.Set("tag", std::string("a"));
  response.outputs.push_back(
      {"y", Must(Tensor::FromValues<float>({1, 3}, std::vector<float>{1, 2, 3})), {}});
  response.outputs.push_back(
      {"s", Must(Tensor::FromStrings({2}, std::vector<std::string>{"a", "bc"})), {}});
  response.outputs.push_back(
      {"n", Must(Tensor::FromValues<int64_t>({2}, std::vector<int64_t>{-1, 1})), {}});
  response.outputs.back().parameters.Set("flag", true);
  write_value("value_fp32_bytes_int64", response);

  InferResponse empty;
  empty.model_version = "1";
  write_value("value_no_outputs", empty);

  using cache::InvalidationScope;
  Write(dir, "invalidate_all", cache::EncodeInvalidation({InvalidationScope::All(), 7}));
  Write(dir, "invalidate_model", cache::EncodeInvalidation({InvalidationScope::Model("m"), 7}));
  Write(dir, "invalidate_model_version",
        cache::EncodeInvalidation({InvalidationScope::ModelVersion("m", 3), 7}));
}

// ---- frontend_http_content_coding_fuzz: flags byte (bit 0 gzip, bits 1-6 offset), body. ----

void WriteContentCodingSeeds(const fs::path& dir) {
  const std::string json =
      R"({"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]})";
  auto compressed = [](frontend::ContentCoding coding, std::string_view text) {
    const std::span<const std::byte> pieces[] = {
        std::as_bytes(std::span<const char>(text.data(), text.size()))};
    return frontend::DeflateBody(coding, pieces);
  };
  const std::string gzip = compressed(frontend::ContentCoding::kGzip, json);
  Write(dir, "gzip_json", std::string(1, '\x01') + gzip);
  Write(dir, "gzip_two_members_offset_5",
        std::string(1, static_cast<char>(1 | (5 << 1))) + gzip +
            compressed(frontend::ContentCoding::kGzip, "[1,2]"));
  Write(dir, "gzip_empty", std::string(1, '\x01') + compressed(frontend::ContentCoding::kGzip, ""));
  Write(dir, "zlib_json",
        std::string(1, '\x00') + compressed(frontend::ContentCoding::kDeflate, json));
  // Raw deflate: the zlib stream without its 2-byte header and 4-byte Adler-32 trailer.
  const std::string zlib = compressed(frontend::ContentCoding::kDeflate, json);
  Write(dir, "raw_deflate_json", std::string(1, '\x00') + zlib.substr(2, zlib.size() - 6));
  Write(dir, "accept_encoding_header", "gzip;q=0.5, deflate;q=0.8, *;q=0");
}

// The first byte is the fuzzer's flags (bits 0-1: lower_case, strip_accents; the rest:
// max_length - 2), then the text.
void WriteWordPieceSeeds(const fs::path& dir) {
  Write(dir, "ascii_sentence",
        "\x7f"
        "The ab, abab! the babs.");
  Write(dir, "accents_and_sigma",
        "\x03"
        "Éé É ΣΑΣ σς ИИ и");
  Write(dir, "cjk_and_emoji",
        "\x01"
        "中文中 😀😀 a😀b \xF0\x9F\x98\x80");
  constexpr char kControls[] =
      "\x02"
      "a\0b\tc\r\nd\xC2\xA0"
      "e\xE2\x80\xA8"
      "f\xEF\xBF\xBDg";
  Write(dir, "controls_and_spaces", std::string_view(kControls, sizeof(kControls) - 1));
  Write(dir, "long_word", std::string(1, '\0') + std::string(30, 'a') + " " + std::string(19, 'b'));
  Write(dir, "invalid_utf8",
        "\x05"
        "ab \xC3\x28 \xED\xA0\x80 \xF4\x90\x80\x80");
}

}  // namespace
}  // namespace brigade

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <tests/fuzz directory>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  brigade::WriteHttpSeeds(root / "protocol_http_infer_request_json_fuzz");
  brigade::WriteBinaryBodySeeds(root / "protocol_http_binary_body_fuzz");
  brigade::WriteGrpcSeeds(root / "protocol_grpc_infer_messages_fuzz");
  brigade::WriteCacheSeeds(root / "cache_cached_value_fuzz");
  brigade::WriteContentCodingSeeds(root / "frontend_http_content_coding_fuzz");
  brigade::WriteWordPieceSeeds(root / "process_wordpiece_tokenizer_fuzz");
  return 0;
}
