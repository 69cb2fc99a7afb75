#include "testing/promtool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/strings.h"

extern char** environ;

namespace brigade::testing {
namespace {

constexpr std::string_view kPromtool = BRIGADE_PROMTOOL;

absl::Status ErrnoError(std::string_view what) {
  return absl::InternalError(StrCat(what, ": ", std::strerror(errno)));
}

// Writes `text` to a new file in the temporary directory; returns its path.
absl::StatusOr<std::string> WriteTempFile(std::string_view text) {
  std::string path = (std::filesystem::temp_directory_path() / "brigade_promtool_XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return ErrnoError(StrCat("creating ", path));
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      const absl::Status error = ErrnoError(StrCat("writing ", path));
      ::close(fd);
      ::unlink(path.c_str());
      return error;
    }
    text.remove_prefix(static_cast<size_t>(written));
  }
  ::close(fd);
  return path;
}

// Runs promtool with `input_path` as stdin, collecting stdout and stderr into the result.
absl::StatusOr<PromtoolResult> Run(const std::string& input_path) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return ErrnoError("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, input_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  const std::string program(kPromtool);
  std::string check = "check";
  std::string metrics = "metrics";
  char* argv[] = {const_cast<char*>(program.c_str()), check.data(), metrics.data(), nullptr};
  pid_t pid;
  const int spawn_error = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawn_error != 0) {
    ::close(pipe_fds[0]);
    return absl::InternalError(StrCat("starting ", program, ": ", std::strerror(spawn_error)));
  }
  PromtoolResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n > 0) {
      result.findings.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError(StrCat("waiting for ", program));
  }
  if (!WIFEXITED(status)) {
    return absl::InternalError(StrCat(program, " did not exit normally (status ", status,
                                      "); it printed: ", result.findings));
  }
  result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace

bool PromtoolInstalled() { return !kPromtool.empty(); }

absl::StatusOr<PromtoolResult> CheckMetrics(std::string_view exposition) {
  if (!PromtoolInstalled()) {
    return absl::FailedPreconditionError("promtool was not found when the build was configured");
  }
  absl::StatusOr<std::string> path = WriteTempFile(exposition);
  if (!path.ok()) return path.status();
  absl::StatusOr<PromtoolResult> result = Run(*path);
  ::unlink(path->c_str());
  return result;
}

}  // namespace brigade::testing
