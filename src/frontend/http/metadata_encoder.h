#ifndef BRIGADE_FRONTEND_HTTP_METADATA_ENCODER_H_
#define BRIGADE_FRONTEND_HTTP_METADATA_ENCODER_H_

// JSON bodies of the KServe v2 metadata endpoints and of every error response:
//   GET /v2                          {"name","version","extensions":[...]}
//   GET /v2/models/{m}[/versions/v]  {"name","versions":[...],"platform","inputs":[...],
//                                     "outputs":[...]}, tensors as {"name","datatype","shape"}
//   any error                        {"error":"<message>"}
// Pure functions; thread-compatible.

#include <string>
#include <string_view>

#include "protocol/metadata.h"

namespace brigade::frontend {

std::string EncodeServerMetadata(const protocol::ServerMetadata& metadata);
std::string EncodeModelMetadata(const protocol::ModelMetadata& metadata);
std::string EncodeError(std::string_view message);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_HTTP_METADATA_ENCODER_H_
