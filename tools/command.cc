#include "tools/command.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace brigade::tools {
namespace {

// Filled by the registrations' constructors, before main; read once by RegisterCommands.
std::vector<std::pair<int, CommandRegistrar>>& Registrars() {
  static auto* registrars = new std::vector<std::pair<int, CommandRegistrar>>();
  return *registrars;
}

}  // namespace

CommandRegistration::CommandRegistration(int order, CommandRegistrar registrar) {
  Registrars().emplace_back(order, registrar);
}

void RegisterCommands(CLI::App& app, int* exit_code) {
  std::vector<std::pair<int, CommandRegistrar>> registrars = Registrars();
  std::sort(registrars.begin(), registrars.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, registrar] : registrars) registrar(app, exit_code);
}

}  // namespace brigade::tools
