#include "tools/client/bearer_token.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::client {
namespace {

// Enough for the longest token and the blank lines around it.
constexpr size_t kMaxFileBytes = 64 * 1024;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

absl::StatusOr<std::string> ReadOwnerOnly(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(
        StrCat("--auth-token-file: cannot open '", path, "': ", std::strerror(errno)));
  }
  struct stat info {};
  absl::Status checked;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    checked = absl::FailedPreconditionError(
        StrCat("--auth-token-file: '", path, "' is not a regular file"));
  } else if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    checked = absl::FailedPreconditionError(
        StrCat("--auth-token-file: its group or others may read or write '", path,
               "'; run chmod 600 '", path, "'"));
  }
  std::string text;
  if (checked.ok()) {
    text.resize(kMaxFileBytes + 1);
    size_t used = 0;
    while (used < text.size()) {
      const ssize_t n = read(fd, text.data() + used, text.size() - used);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      used += static_cast<size_t>(n);
    }
    text.resize(used);
    if (used > kMaxFileBytes) {
      checked = absl::InvalidArgumentError(
          StrCat("--auth-token-file: '", path, "' is over ", kMaxFileBytes, " bytes"));
    }
  }
  close(fd);
  if (!checked.ok()) return checked;
  return text;
}

}  // namespace

absl::Status CheckBearerToken(std::string_view token) {
  if (token.size() > kMaxBearerTokenChars) {
    return absl::InvalidArgumentError(
        StrCat("a bearer token has at most ", kMaxBearerTokenChars, " characters"));
  }
  for (char c : token) {
    if (c <= 0x20 || c >= 0x7f) {
      return absl::InvalidArgumentError(
          "a bearer token is printable ASCII without spaces or control characters");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveBearerToken(const std::string& token_file,
                                               const char* environment_value) {
  std::string text;
  if (!token_file.empty()) {
    BRIGADE_ASSIGN_OR_RETURN(text, ReadOwnerOnly(token_file));
  } else if (environment_value != nullptr) {
    text = environment_value;
  }
  std::string_view rest = text;
  while (!rest.empty() && IsBlank(rest.front())) rest.remove_prefix(1);
  const size_t end = rest.find_first_of("\r\n");
  std::string_view token = rest.substr(0, end);
  while (!token.empty() && IsBlank(token.back())) token.remove_suffix(1);
  if (absl::Status status = CheckBearerToken(token); !status.ok()) {
    return absl::InvalidArgumentError(
        StrCat(token_file.empty() ? kTokenEnvironmentVariable : "--auth-token-file", ": ",
               status.message()));
  }
  return std::string(token);
}

}  // namespace brigade::client
