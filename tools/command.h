#ifndef BRIGADE_TOOLS_COMMAND_H_
#define BRIGADE_TOOLS_COMMAND_H_

// The `brigade` binary's verbs. Each verb lives in its own <verb>_command.cc and registers a
// CLI11 subcommand, listed by RegisterCommands (below). A verb's callback stores its exit code
// in the shared `int* exit_code` (CLI11 callbacks return void).
//
// Verbs are thin: parse flags, call the libraries under src/, print.

#include "CLI/App.hpp"

namespace brigade::tools {

// The verbs register themselves: the binary has those whose files tools/CMakeLists.txt compiles
// into it (bench and analyze need the gRPC client, so a build without gRPC has neither), listed
// in --help by `order`. Each file ends with one, named for its verb (the files share a unity
// unit, where two `kRegistration`s clash):
//   const CommandRegistration kBenchRegistration(20, RegisterBenchCommand);
using CommandRegistrar = void (*)(CLI::App& app, int* exit_code);
struct CommandRegistration {
  CommandRegistration(int order, CommandRegistrar registrar);
};
// Registers every verb of the binary on `app`; main.cc calls it once.
void RegisterCommands(CLI::App& app, int* exit_code);

void RegisterServeCommand(CLI::App& app, int* exit_code);
void RegisterBenchCommand(CLI::App& app, int* exit_code);
void RegisterInspectCommand(CLI::App& app, int* exit_code);
void RegisterAnalyzeCommand(CLI::App& app, int* exit_code);
// `brigade analyze cascade`, registered by RegisterAnalyzeCommand on its subcommand.
void RegisterAnalyzeCascadeCommand(CLI::App& analyze, int* exit_code);
void RegisterDoctorCommand(CLI::App& app, int* exit_code);
// `brigade optimize quantize` (INT8 quantization with an accuracy gate).
void RegisterOptimizeCommand(CLI::App& app, int* exit_code);

}  // namespace brigade::tools

#endif  // BRIGADE_TOOLS_COMMAND_H_
