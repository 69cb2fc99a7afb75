#include "cache/redis_test_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "hiredis/hiredis.h"

namespace brigade::cache {
namespace {

constexpr char kRedisServer[] = "/usr/bin/redis-server";
constexpr auto kStartTimeout = std::chrono::seconds(10);

absl::StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!ok) return absl::UnavailableError("cannot find a free port");
  return ntohs(address.sin_port);
}

// True once the server answers PING.
bool Answers(int port) {
  timeval timeout{0, 200'000};
  redisContext* context = redisConnectWithTimeout("127.0.0.1", port, timeout);
  if (context == nullptr) return false;
  bool ok = false;
  if (context->err == 0) {
    auto* reply = static_cast<redisReply*>(redisCommand(context, "PING"));
    ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    if (reply != nullptr) freeReplyObject(reply);
  }
  redisFree(context);
  return ok;
}

RedisReply Convert(const redisReply& reply) {
  RedisReply out;
  switch (reply.type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  if (reply.str != nullptr) out.str.assign(reply.str, reply.len);
  out.integer = reply.integer;
  for (size_t i = 0; i < reply.elements; ++i) out.elements.push_back(Convert(*reply.element[i]));
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RedisTestServer>> RedisTestServer::Start() {
  if (access(kRedisServer, X_OK) != 0) {
    return absl::UnavailableError(
        StrCat(kRedisServer, " is not installed (apt-get install redis-server)"));
  }
  absl::StatusOr<int> port = FreePort();
  if (!port.ok()) return port.status();
  auto server = std::make_unique<RedisTestServer>(*port);
  absl::Status launched = server->Launch();
  if (!launched.ok()) return launched;
  return server;
}

RedisTestServer::~RedisTestServer() { Kill(); }

absl::Status RedisTestServer::Launch() {
  const std::string port = std::to_string(port_);
  std::vector<std::string> args = {kRedisServer, "--port",           port,      "--bind",
                                   "127.0.0.1",  "--save",           "",        "--appendonly",
                                   "no",         "--protected-mode", "no",      "--daemonize",
                                   "no",         "--loglevel",       "warning", "--dir",
                                   "/tmp"};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::UnavailableError("fork() failed");
  if (pid == 0) {
    // Child: die with the test process, keep its output quiet, become redis-server.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      dup2(null_fd, STDOUT_FILENO);
      close(null_fd);
    }
    execv(kRedisServer, argv.data());
    _exit(127);
  }
  pid_ = pid;
  paused_ = false;
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError(StrCat("redis-server on port ", port_, " exited at start"));
    }
    if (Answers(port_)) return absl::OkStatus();
    // Polling another process's start-up: there is nothing to wait on but the clock.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Kill();
  return absl::UnavailableError(StrCat("redis-server on port ", port_, " did not start"));
}

void RedisTestServer::Kill() {
  if (pid_ <= 0) return;
  if (paused_) kill(pid_, SIGCONT);
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  paused_ = false;
}

void RedisTestServer::Pause() {
  if (pid_ > 0 && !paused_) {
    kill(pid_, SIGSTOP);
    paused_ = true;
  }
}

void RedisTestServer::Resume() {
  if (pid_ > 0 && paused_) {
    kill(pid_, SIGCONT);
    paused_ = false;
  }
}

absl::StatusOr<RedisReply> RedisTestServer::Run(const std::vector<std::string>& argv) const {
  timeval timeout{2, 0};
  redisContext* context = redisConnectWithTimeout("127.0.0.1", port_, timeout);
  if (context == nullptr || context->err != 0) {
    if (context != nullptr) redisFree(context);
    return absl::UnavailableError(StrCat("cannot connect to redis on port ", port_));
  }
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const std::string& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(args.size()), args.data(), lengths.data()));
  absl::StatusOr<RedisReply> result = absl::UnavailableError("redis: no reply");
  if (reply != nullptr) {
    result = Convert(*reply);
    freeReplyObject(reply);
  }
  redisFree(context);
  return result;
}

absl::Status RedisTestServer::Restart() {
  Kill();
  return Launch();
}

}  // namespace brigade::cache
