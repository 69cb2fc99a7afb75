#ifndef BRIGADE_PROTOCOL_REPOSITORY_INDEX_H_
#define BRIGADE_PROTOCOL_REPOSITORY_INDEX_H_

// Triton's model repository extension: one row of the repository index (POST
// /v2/repository/index, gRPC RepositoryIndex) and the parameters of a load request. Plain value
// types shared by the server and the client; no behaviour.

#include <string>

namespace brigade::protocol {

struct RepositoryIndexEntry {
  std::string name;
  std::string version;  // empty for a model with no version loaded
  std::string state;    // "READY", "LOADING", "UNLOADING", "UNAVAILABLE", or empty
  std::string reason;
};

struct LoadModelRequest {
  std::string name;
  // Optional config override, as JSON (the `config` parameter). Empty: read config.pbtxt.
  std::string config_json;
};

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_REPOSITORY_INDEX_H_
