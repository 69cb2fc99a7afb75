#include "engine/torch/torch_error.h"

#include <string_view>

#include "c10/util/Exception.h"

namespace brigade::engine {

std::string DescribeTorchException(const std::exception& e) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  std::string_view text = torch_error != nullptr ? torch_error->what_without_backtrace() : e.what();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  // TorchScript runtime errors end with the error the model raised, after a long traceback; lead
  // with it so a one-line view of the message (a log line, a client error) says what went wrong.
  const size_t last_line = text.rfind('\n');
  if (last_line == std::string_view::npos) return std::string(text);
  return std::string(text.substr(last_line + 1)) + "\n" + std::string(text.substr(0, last_line));
}

}  // namespace brigade::engine
