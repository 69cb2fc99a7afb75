#ifndef BRIGADE_PROTOCOL_HTTP_MODEL_CONFIG_JSON_H_
#define BRIGADE_PROTOCOL_HTTP_MODEL_CONFIG_JSON_H_

// EncodeModelConfig: the body of GET /v2/models/{m}[/versions/{v}]/config — the model's
// configuration as JSON in the shape Triton returns it:
//   * proto field names (max_batch_size, data_type, ...);
//   * every scalar field, even at its default (a client reads max_batch_size: 0 rather than a
//     missing key), repeated fields as arrays and maps as objects even when empty, sub-messages
//     and oneof members only when set;
//   * enums by name ("TYPE_FP32");
//   * 64-bit integers as JSON numbers ("dims":[3,224,224]).
//
// Why not protobuf's MessageToJsonString: it prints int64/uint64 as JSON strings ("dims":["3"]),
// which Triton post-processes away because its clients (perf_analyzer, tritonclient users) read
// dims as numbers. Walking the message with reflection gives Triton's output in one pass.
//
// Works for any message (the config proto is generated elsewhere); pure; thread-compatible.

#include <string>

#include "google/protobuf/message.h"

namespace brigade::protocol::http {

std::string EncodeModelConfig(const google::protobuf::Message& config);

}  // namespace brigade::protocol::http

#endif  // BRIGADE_PROTOCOL_HTTP_MODEL_CONFIG_JSON_H_
