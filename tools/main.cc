// brigade: one binary, several verbs (`brigade --help`).

#include <cstdio>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "tools/command.h"

int main(int argc, char** argv) {
  // Debian's Abseil checks every Mutex acquisition for lock-order cycles (a graph update per
  // lock), which shows in request-path profiles; the unit tests keep the check on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app("Brigade: a latency-first inference server (KServe v2 over HTTP and gRPC)",
               "brigade");
  app.require_subcommand(1);
  app.set_version_flag("--version", BRIGADE_VERSION);
  int exit_code = 0;
  brigade::tools::RegisterCommands(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
