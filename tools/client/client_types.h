#ifndef BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_
#define BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_

// What a KServe v2 client sends, independent of the wire (HTTP JSON, HTTP binary, gRPC). Tensors
// and parameters are core's types, so a tensor travels from a test or a load generator to the
// wire, and back from the wire into an InferResponse, without a conversion layer of its own; the
// results it receives (metadata, statistics, the repository index) are protocol/'s types, the
// same the server encodes, and the request itself is protocol/'s InferSpec, which the request
// encoders read. Plain value types; no behaviour.

#include <cstdint>
#include <string>
#include <vector>

#include "core/data_type.h"
#include "core/infer_request.h"
#include "core/parameters.h"
#include "core/shape.h"
#include "protocol/infer_spec.h"
#include "protocol/metadata.h"
#include "protocol/repository_index.h"
#include "protocol/statistics.h"

namespace brigade::client {

// One inference request as the client sends it (see protocol/infer_spec.h for how tensors
// travel on each wire).
using InferSpec = protocol::InferSpec;

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_CLIENT_TYPES_H_
