#include "optimize/recipe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/strings.h"

extern char** environ;

namespace brigade::optimize {
namespace {

// Bounds on what is kept of the child's output: the summary is one line of JSON; of stderr only
// the end is needed, for the error message.
constexpr size_t kMaxStdoutBytes = 1 << 20;
constexpr size_t kStderrTailBytes = 4096;

// Closes the descriptors it holds when it goes out of scope.
struct Pipe {
  int read_fd = -1;
  int write_fd = -1;
  ~Pipe() {
    if (read_fd >= 0) close(read_fd);
    if (write_fd >= 0) close(write_fd);
  }
  void CloseWrite() {
    if (write_fd >= 0) close(write_fd);
    write_fd = -1;
  }
};

absl::Status MakePipe(Pipe& pipe) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(StrCat("cannot create a pipe: ", std::strerror(errno)));
  }
  pipe.read_fd = fds[0];
  pipe.write_fd = fds[1];
  return absl::OkStatus();
}

// The child's last non-empty stderr line: the recipes' message, or a Python exception's.
std::string LastLine(std::string_view tail) {
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.remove_suffix(1);
  const size_t newline = tail.rfind('\n');
  const std::string_view line = newline == std::string_view::npos ? tail : tail.substr(newline + 1);
  return line.empty() ? std::string("(no message on stderr)") : std::string(line);
}

std::string ScriptName(const RecipeRun& run) {
  return std::filesystem::path(run.script).filename().string();
}

}  // namespace

std::string SelfExecutablePath() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : self.string();
}

absl::StatusOr<std::string> FindRecipe(std::string_view file, std::string_view recipe_dir,
                                       std::string_view exe_path) {
  std::vector<std::filesystem::path> candidates;
  if (!recipe_dir.empty()) {
    candidates.push_back(std::filesystem::path(recipe_dir) / file);
  } else if (!exe_path.empty()) {
    const std::filesystem::path dir = std::filesystem::path(exe_path).parent_path();
    candidates.push_back(dir / ".." / "scripts" / "optimize" / file);
    candidates.push_back(dir / ".." / "share" / "brigade" / "optimize" / file);
  }
  std::string tried;
  for (const std::filesystem::path& candidate : candidates) {
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error)) {
      return std::filesystem::weakly_canonical(candidate, error).string();
    }
    tried += StrCat(tried.empty() ? "" : ", ", candidate.lexically_normal().string());
  }
  return absl::NotFoundError(StrCat("--recipe-dir: recipe '", file, "' not found (looked in ",
                                    tried.empty() ? "nothing: no binary path" : tried,
                                    "); pass --recipe-dir DIR holding scripts/optimize's files"));
}

absl::StatusOr<std::string> RunRecipe(const RecipeRun& run) {
  Pipe out, err;
  if (absl::Status s = MakePipe(out); !s.ok()) return s;
  if (absl::Status s = MakePipe(err); !s.ok()) return s;
  std::vector<std::string> args = {run.python, run.script};
  args.insert(args.end(), run.args.begin(), run.args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_fd, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group, so a timeout kills the interpreter and anything it started.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const bool search = run.python.find('/') == std::string::npos;
  const int spawned =
      search ? posix_spawnp(&pid, run.python.c_str(), &actions, &attributes, argv.data(), environ)
             : posix_spawn(&pid, run.python.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    return absl::NotFoundError(
        StrCat("--python: cannot run '", run.python, "' (", std::strerror(spawned),
               "); the recipes need Debian's python3 with python3-torch and python3-onnx"));
  }
  out.CloseWrite();
  err.CloseWrite();

  const int64_t deadline_ns = run.clock->NowNs() + absl::ToInt64Nanoseconds(run.timeout);
  std::string stdout_text, stderr_tail;
  bool timed_out = false;
  pollfd fds[2] = {{out.read_fd, POLLIN, 0}, {err.read_fd, POLLIN, 0}};
  char buffer[4096];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const int64_t left_ns = deadline_ns - run.clock->NowNs();
    if (left_ns <= 0) {
      timed_out = true;
      break;
    }
    // Wake at least every second to re-read the deadline from the clock.
    const int wait_ms = static_cast<int>(std::min<int64_t>(left_ns / 1'000'000 + 1, 1000));
    const int ready = poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n <= 0) {
        fds[i].fd = -1;  // EOF (or an error): the Pipe closes it
        continue;
      }
      const std::string_view chunk(buffer, static_cast<size_t>(n));
      if (i == 0) {
        if (stdout_text.size() < kMaxStdoutBytes) stdout_text.append(chunk);
      } else {
        if (run.relay_stderr) (void)!write(STDERR_FILENO, chunk.data(), chunk.size());
        stderr_tail.append(chunk);
        if (stderr_tail.size() > kStderrTailBytes) {
          stderr_tail.erase(0, stderr_tail.size() - kStderrTailBytes);
        }
      }
    }
  }
  // Both pipes closed is not the end: a child may close them and keep running, so the wait for
  // its exit is bounded by the same deadline.
  int status = 0;
  while (!timed_out) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (run.clock->NowNs() >= deadline_ns) {
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (timed_out) {
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  const std::string name = ScriptName(run);
  if (timed_out) {
    return absl::DeadlineExceededError(StrCat("--recipe-timeout: ", name, " ran longer than ",
                                              absl::FormatDuration(run.timeout),
                                              " and was stopped"));
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(
        StrCat(name, " was killed by signal ", WTERMSIG(status), ": ", LastLine(stderr_tail)));
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  switch (code) {
    case 0:
      return stdout_text;
    case kRecipeExitUsage:
    case kRecipeExitUnsupported:
      return absl::InvalidArgumentError(LastLine(stderr_tail));
    case kRecipeExitMissingModule:
      return absl::FailedPreconditionError(LastLine(stderr_tail));
    default:
      return absl::InternalError(
          StrCat(name, " failed (exit ", code, "): ", LastLine(stderr_tail)));
  }
}

}  // namespace brigade::optimize
