#include "tools/doctor/host_files.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "core/strings.h"

namespace brigade::doctor {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

absl::Status ErrnoStatus(int error, std::string_view path) {
  const std::string message = StrCat(path, ": ", std::strerror(error));
  return error == ENOENT || error == ENOTDIR ? absl::NotFoundError(message)
                                             : absl::UnavailableError(message);
}

std::string Parent(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string_view::npos ? "/" : std::string(path.substr(0, slash));
}

}  // namespace

HostFiles::HostFiles(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string HostFiles::OnDisk(std::string_view path) const { return StrCat(root_, path); }

absl::StatusOr<std::string> HostFiles::Read(std::string_view path) const {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(OnDisk(path).c_str(), "rb"), &std::fclose);
  if (file == nullptr) return ErrnoStatus(errno, path);
  // /proc and /sys report a size of 0 or 4096 whatever they hold, so read until end of file.
  std::string text;
  char buffer[8192];
  while (true) {
    const size_t n = std::fread(buffer, 1, sizeof(buffer), file.get());
    text.append(buffer, n);
    if (text.size() > kMaxFileBytes) {
      return absl::OutOfRangeError(StrCat(path, ": longer than ", kMaxFileBytes, " bytes"));
    }
    if (n < sizeof(buffer)) break;
  }
  if (std::ferror(file.get())) return ErrnoStatus(errno, path);
  return text;
}

absl::StatusOr<std::string> HostFiles::ReadLine(std::string_view path) const {
  absl::StatusOr<std::string> text = Read(path);
  if (!text.ok()) return text.status();
  std::string_view line(*text);
  line = line.substr(0, line.find('\n'));
  return std::string(Trim(line));
}

bool HostFiles::Exists(std::string_view path) const {
  struct stat info;
  return ::stat(OnDisk(path).c_str(), &info) == 0;
}

std::vector<std::string> HostFiles::List(std::string_view path) const {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(OnDisk(path).c_str()), &::closedir);
  if (dir == nullptr) return names;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string_view name(entry->d_name);
    if (name != "." && name != "..") names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::vector<std::string>> HostFiles::Resolve(std::string_view path) const {
  std::vector<std::string> chain{std::string(path)};
  for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
    const std::string& current = chain.back();
    struct stat info;
    if (::lstat(OnDisk(current).c_str(), &info) != 0) return ErrnoStatus(errno, current);
    if (!S_ISLNK(info.st_mode)) return chain;
    char target[4096];
    const ssize_t n = ::readlink(OnDisk(current).c_str(), target, sizeof(target) - 1);
    if (n < 0) return ErrnoStatus(errno, current);
    const std::string_view link(target, static_cast<size_t>(n));
    chain.push_back(link.starts_with('/') ? std::string(link) : StrCat(Parent(current), "/", link));
  }
  return absl::FailedPreconditionError(
      StrCat(path, ": more than ", kMaxLinkHops, " symbolic links"));
}

absl::StatusOr<CpuFlags> ReadCpuFlags(const HostFiles& host) {
  absl::StatusOr<std::string> cpuinfo = host.Read("/proc/cpuinfo");
  if (!cpuinfo.ok()) return cpuinfo.status();
  CpuFlags flags;
  const size_t at = cpuinfo->find("\nflags");
  if (at == std::string::npos && !cpuinfo->starts_with("flags")) return flags;
  const size_t start = at == std::string::npos ? 0 : at + 1;
  std::string_view line(*cpuinfo);
  line = line.substr(start, line.find('\n', start) - start);
  const size_t colon = line.find(':');
  line = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  while (!line.empty()) {
    const size_t space = line.find_first_of(" \t");
    if (space != 0) flags.emplace(line.substr(0, space));
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  }
  return flags;
}

absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  text = Trim(text);
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view element = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t dash = element.find('-');
    int first = 0;
    int last = 0;
    const bool ok = dash == std::string_view::npos
                        ? ParseInteger(element, &first) && ParseInteger(element, &last)
                        : ParseInteger(element.substr(0, dash), &first) &&
                              ParseInteger(element.substr(dash + 1), &last);
    if (!ok || first < 0 || last < first || last > kMaxCpuId) {
      return absl::InvalidArgumentError(StrCat(
          "cpu list element '", element, "' is not N or N-M with 0 <= N <= M <= ", kMaxCpuId));
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (cpus.size() > static_cast<size_t>(kMaxCpuId) + 1) {
      return absl::InvalidArgumentError("cpu list names more CPUs than a kernel can have");
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? StrCat(cpus[i]) : StrCat(cpus[i], "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace brigade::doctor
