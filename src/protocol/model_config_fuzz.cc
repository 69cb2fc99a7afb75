// libFuzzer target: a model config from untrusted bytes (config.pbtxt, or the JSON a load request
// carries) through everything the server does with it before a backend sees it: parsing,
// validation and completion, the override check, the ignored-field report, and the JSON the
// /config endpoint answers with (parsed back, as a client would send it). Any input must be
// accepted or refused without a crash, a sanitizer report (signed overflow in the dims checks is
// one) or an unbounded allocation. Build: see CMakeLists.txt (BRIGADE_FUZZ).
//
// Input layout: byte 0 selects the format (bit 0 set: JSON, else protobuf text format; the
// seeds use '0' and '1'), the rest is the config.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/model_config_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brigade::protocol;
  if (size < 1) return 0;
  const bool json = (data[0] & 1) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  absl::StatusOr<ParsedConfig> parsed =
      json ? ParseModelConfigJson(text, "fuzz") : ParseModelConfigText(text, "config.pbtxt");
  if (!parsed.ok()) return 0;
  (void)CheckOverrideNamesNoFiles("m", parsed->config);
  brigade::config::ModelConfig config = parsed->config;
  if (!ValidateModelConfig("m", &config).ok()) return 0;
  volatile size_t sink = IgnoredFields(config).size();
  absl::StatusOr<std::string> written = ModelConfigToJson(config);
  if (written.ok()) {
    absl::StatusOr<ParsedConfig> again = ParseModelConfigJson(*written, "fuzz round trip");
    if (again.ok())
      sink = sink + static_cast<size_t>(ValidateModelConfig("m", &again->config).ok());
  }
  for (const auto& input : config.input()) {
    sink = sink + static_cast<size_t>(FromConfigDataType(input.data_type()));
  }
  (void)sink;
  return 0;
}
