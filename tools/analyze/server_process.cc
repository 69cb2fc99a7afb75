#include "tools/analyze/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/time/time.h"
#include "core/clock.h"
#include "core/strings.h"
#include "tools/client/client.h"

extern char** environ;

namespace brigade::analyze {
namespace {

int64_t NowMs() { return Clock::Real()->NowNs() / 1'000'000; }

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// The port in a line like "[info] HTTP (KServe v2 REST) listening on 127.0.0.1:8123"; 0 if none.
int PortFromLogLine(std::string_view line) {
  if (line.find("HTTP") == std::string_view::npos) return 0;
  const size_t at = line.find("listening on ");
  if (at == std::string_view::npos) return 0;
  std::string_view rest = line.substr(at + 13);
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return 0;
  rest = rest.substr(colon + 1);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  int port = 0;
  if (!ParseInteger(rest.substr(0, digits), &port) || port <= 0 || port > 65535) return 0;
  return port;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return StrCat("exit ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return StrCat("signal ", WTERMSIG(status));
  return "unknown status";
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(const Options& options) {
  std::vector<std::string> args = {
      options.binary,   "serve",     "--model-repository",  options.model_repository,
      "--http-address", "127.0.0.1", "--http-port",         "0",
      "--allow-grpc",   "false",     "--exit-timeout-secs", "2"};
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  pid_t pid = 0;
  const int error =
      posix_spawn(&pid, options.binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) {
    close(fds[0]);
    return absl::InternalError(StrCat("cannot start ", options.binary, ": ", std::strerror(error)));
  }
  auto process = std::make_unique<ServerProcess>(Key(), options, pid, fds[0]);
  const int64_t deadline_ms = NowMs() + options.start_timeout_ms;
  absl::Status status = process->AwaitPort(deadline_ms);
  if (status.ok()) status = process->AwaitReady(deadline_ms);
  if (!status.ok()) {
    const std::string exit = process->Stop();
    return absl::UnavailableError(StrCat("brigade serve on ", options.model_repository, " (", exit,
                                         "): ", ToStd(status.message()), "\n",
                                         process->OutputTail()));
  }
  return process;
}

ServerProcess::ServerProcess(Key, const Options& options, pid_t pid, int read_fd)
    : options_(options), pid_(pid), read_fd_(read_fd) {
  reader_ = std::thread([this] { ReadOutput(); });
}

ServerProcess::~ServerProcess() {
  Stop();
  if (reader_.joinable()) reader_.join();
  close(read_fd_);
}

void ServerProcess::ReadOutput() {
  std::string partial;
  char buffer[4096];
  while (true) {
    const ssize_t read_bytes = read(read_fd_, buffer, sizeof(buffer));
    if (read_bytes < 0 && errno == EINTR) continue;
    if (read_bytes <= 0) break;
    partial.append(buffer, static_cast<size_t>(read_bytes));
    size_t newline = 0;
    while ((newline = partial.find('\n')) != std::string::npos) {
      std::string line = partial.substr(0, newline);
      partial.erase(0, newline + 1);
      const int port = PortFromLogLine(line);
      absl::MutexLock lock(&mu_);
      if (port_ == 0 && port > 0) port_ = port;
      tail_.push_back(std::move(line));
      while (tail_.size() > options_.tail_lines) tail_.pop_front();
    }
  }
  absl::MutexLock lock(&mu_);
  if (!partial.empty()) tail_.push_back(std::move(partial));
  output_closed_ = true;
}

absl::Status ServerProcess::AwaitPort(int64_t deadline_ms) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(this, &ServerProcess::PortKnownOrOutputClosed),
                       absl::Milliseconds(std::max<int64_t>(0, deadline_ms - NowMs())));
  if (port_ > 0) return absl::OkStatus();
  if (output_closed_) return absl::UnavailableError("the server exited during start-up");
  return absl::UnavailableError("the server did not report its HTTP port in time");
}

absl::Status ServerProcess::AwaitReady(int64_t deadline_ms) {
  client::ClientOptions client_options;
  client_options.address = address();
  client_options.timeout_ms = 5'000;
  client_options.bearer_token = options_.bearer_token;
  absl::StatusOr<std::unique_ptr<client::Client>> client = client::Client::Create(client_options);
  if (!client.ok()) return client.status();
  absl::Status last = absl::UnavailableError("not ready");
  while (NowMs() < deadline_ms) {
    if (Reap(false)) {
      return absl::UnavailableError(
          StrCat("the server exited (", DescribeWaitStatus(wait_status_), ") before it was ready"));
    }
    absl::StatusOr<bool> ready = (*client)->ServerReady();
    if (ready.ok() && *ready) return absl::OkStatus();
    if (!ready.ok()) last = ready.status();
    SleepMs(20);
  }
  return absl::UnavailableError(
      StrCat("the server was not ready in time: ", ToStd(last.message())));
}

bool ServerProcess::Reap(bool block) {
  if (reaped_) return true;
  int status = 0;
  pid_t result = 0;
  do {
    result = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (result < 0 && errno == EINTR);
  if (result == pid_) {
    reaped_ = true;
    wait_status_ = status;
  }
  return reaped_;
}

std::string ServerProcess::address() const {
  absl::MutexLock lock(&mu_);
  return StrCat("127.0.0.1:", port_);
}

std::string ServerProcess::Stop() {
  if (!Reap(false)) {
    kill(pid_, SIGTERM);
    const int64_t deadline_ms = NowMs() + options_.stop_timeout_ms;
    while (!Reap(false) && NowMs() < deadline_ms) SleepMs(10);
    if (!reaped_) {
      kill(pid_, SIGKILL);
      Reap(true);
    }
  }
  return DescribeWaitStatus(wait_status_);
}

std::string ServerProcess::OutputTail() const {
  absl::MutexLock lock(&mu_);
  std::string text;
  for (const std::string& line : tail_) text += StrCat("  | ", line, "\n");
  return text;
}

}  // namespace brigade::analyze
