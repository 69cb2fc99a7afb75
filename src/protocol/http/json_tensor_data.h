#ifndef BRIGADE_PROTOCOL_HTTP_JSON_TENSOR_DATA_H_
#define BRIGADE_PROTOCOL_HTTP_JSON_TENSOR_DATA_H_

// Tensor contents as JSON `data` arrays (KServe v2 REST), in both directions.
//
// Reading: `data` may be nested ([[1,2],[3,4]]) or flat ([1,2,3,4]) or, for a one-element tensor,
// a bare scalar; elements are taken in row-major order and only their total count is checked
// against the shape (as Triton does). Each element must have the JSON type of the datatype: BOOL
// true/false, integers for the integer types (and within their range: 300 is not a UINT8), numbers
// for FP32/FP64 (FP32 within float range), strings for BYTES. FP16 and BF16 have no JSON form and
// are refused with a message pointing at the binary extension.
//
// Writing: always flat, by the server (outputs) and the client (inputs) alike. BYTES elements must
// be UTF-8 (JSON strings cannot carry arbitrary bytes). FP16/BF16 outputs are widened to float,
// as Triton does, but FP16/BF16 inputs are refused: a server reads JSON numbers into FP16 inputs
// no more than this one does (see above). Each refusal tells the caller which binary form to use
// instead, which differs by side.
//
// Errors: INVALID_ARGUMENT naming `label` (e.g. "input 'INPUT0'"), the element index and the
// offending JSON token. Pure functions; thread-compatible.

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "protocol/http/json_reader.h"
#include "protocol/http/json_writer.h"
#include "simdjson.h"

namespace brigade::protocol::http {

// The deepest JSON nesting accepted anywhere in a request (Triton's limit).
inline constexpr int kMaxJsonDepth = 100;

// Reads `data` into a new owned tensor. `depth` is the JSON depth of `data` itself (the root
// object is depth 1), so nested arrays may go down to kMaxJsonDepth. `json_bytes` is the size of
// the whole JSON document; a shape that needs more elements than it could possibly hold is refused
// before anything is allocated.
absl::StatusOr<Tensor> ReadJsonTensorData(simdjson::ondemand::value& data, DataType dtype,
                                          Shape shape, LazyText label, int depth,
                                          size_t json_bytes);

// Which side writes the data, for the differences above.
enum class JsonDataSide { kResponseOutput, kRequestInput };

// Appends `tensor`'s elements as one flat JSON array.
absl::Status WriteJsonTensorData(const Tensor& tensor, LazyText label, JsonWriter* writer,
                                 JsonDataSide side = JsonDataSide::kResponseOutput);

// Widening conversions used for JSON output (exposed for tests).
float HalfToFloat(uint16_t bits);
float Bfloat16ToFloat(uint16_t bits);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_JSON_TENSOR_DATA_H_
