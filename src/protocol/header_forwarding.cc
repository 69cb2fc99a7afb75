#include "protocol/header_forwarding.h"

#include <utility>

#include "core/strings.h"
#include "protocol/infer_parameters.h"
#include "re2/re2.h"

namespace brigade::protocol {

absl::StatusOr<std::unique_ptr<HeaderForwarding>> HeaderForwarding::Create(std::string_view pattern,
                                                                           std::string_view flag) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto regex =
      std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!regex->ok()) {
    return absl::InvalidArgumentError(
        StrCat(flag, " '", pattern, "' is not a valid RE2 pattern: ", regex->error()));
  }
  return std::make_unique<HeaderForwarding>(std::string(pattern), std::move(regex));
}

HeaderForwarding::HeaderForwarding(std::string pattern, std::unique_ptr<re2::RE2> regex)
    : pattern_(std::move(pattern)), regex_(std::move(regex)) {}

HeaderForwarding::~HeaderForwarding() = default;

namespace {

std::string Lowered(std::string_view name) {
  std::string lowered(name);
  for (char& c : lowered) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lowered;
}

}  // namespace

bool HeaderForwarding::Matches(std::string_view name) const {
  const std::string lowered = Lowered(name);
  return lowered != "authorization" && re2::RE2::PartialMatch(lowered, *regex_);
}

absl::Status HeaderForwarding::Forward(std::string_view sent_name, std::string_view value,
                                       Parameters* parameters, size_t* forwarded) const {
  const std::string name = Lowered(sent_name);
  if (name == "authorization" || !re2::RE2::PartialMatch(name, *regex_)) {
    return absl::OkStatus();
  }
  if (FindParameterRule(ParameterScope::kRequest, name) != nullptr ||
      name.starts_with(kReservedPrefix)) {
    return absl::InvalidArgumentError(
        StrCat("header '", name,
               "' matches the header forward pattern but names a reserved "
               "parameter; it cannot be forwarded"));
  }
  if (*forwarded == kMaxForwardedHeaders) {
    return absl::InvalidArgumentError(
        StrCat("header '", name, "': more than ", kMaxForwardedHeaders, " headers to forward"));
  }
  if (value.size() > kMaxForwardedValueBytes) {
    return absl::InvalidArgumentError(StrCat("header '", name, "' to forward has ", value.size(),
                                             " bytes; the limit is ", kMaxForwardedValueBytes));
  }
  ++*forwarded;
  if (parameters->Contains(name)) return absl::OkStatus();  // the body's parameter wins
  parameters->Set(name, std::string(value));
  return absl::OkStatus();
}

void HeaderForwarding::Merge(const Parameters& forwarded, Parameters* parameters) {
  for (const auto& [key, value] : forwarded.entries()) {
    if (!parameters->Contains(key)) parameters->Set(key, value);
  }
}

}  // namespace brigade::protocol
