#include "tools/analyze/machine_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <string>

#include "core/clock.h"
#include "core/strings.h"

namespace brigade::analyze {
namespace {

double CpuSeconds(const rusage& usage) {
  auto seconds = [](const timeval& time) { return time.tv_sec + time.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

absl::StatusOr<CpuTicks> ParseCpuTicks(std::string_view proc_stat) {
  if (!proc_stat.starts_with("cpu ")) {
    return absl::InvalidArgumentError("/proc/stat does not start with the aggregate cpu line");
  }
  std::string_view line = proc_stat.substr(0, proc_stat.find('\n'));
  line.remove_prefix(4);
  // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already
  // counted in user and nice.
  std::array<uint64_t, 8> fields{};
  size_t count = 0;
  while (count < fields.size()) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const std::string_view token = line.substr(0, line.find(' '));
    if (!ParseInteger(token, &fields[count])) {
      return absl::InvalidArgumentError(StrCat("/proc/stat: '", token, "' is not a tick count"));
    }
    line.remove_prefix(token.size());
    ++count;
  }
  if (count < fields.size()) {
    return absl::InvalidArgumentError(
        StrCat("/proc/stat: the cpu line has ", count, " fields, 8 are needed"));
  }
  return CpuTicks{.busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7],
                  .steal = fields[7]};
}

absl::StatusOr<CpuSample> SampleCpu() {
  std::ifstream file("/proc/stat");
  if (!file) return absl::UnavailableError("cannot read /proc/stat");
  std::string line;
  std::getline(file, line);
  absl::StatusOr<CpuTicks> ticks = ParseCpuTicks(line);
  if (!ticks.ok()) return absl::UnavailableError(ticks.status().message());
  const long ticks_per_s = sysconf(_SC_CLK_TCK);
  if (ticks_per_s <= 0) return absl::UnavailableError("sysconf(_SC_CLK_TCK) failed");
  rusage self{};
  rusage children{};
  if (getrusage(RUSAGE_SELF, &self) != 0 || getrusage(RUSAGE_CHILDREN, &children) != 0) {
    return absl::UnavailableError("getrusage failed");
  }
  return CpuSample{.wall_s = Clock::Real()->NowNs() * 1e-9,
                   .machine_busy_s = static_cast<double>(ticks->busy) / ticks_per_s,
                   .own_s = CpuSeconds(self) + CpuSeconds(children),
                   .stolen_s = static_cast<double>(ticks->steal) / ticks_per_s};
}

double OtherCoresBusy(const CpuSample& before, const CpuSample& after) {
  const double wall_s = after.wall_s - before.wall_s;
  if (!(wall_s > 0)) return 0;
  const double other_s =
      (after.machine_busy_s - before.machine_busy_s) - (after.own_s - before.own_s);
  return std::max(0.0, other_s / wall_s);
}

}  // namespace brigade::analyze
