#include "optimize/register.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::optimize {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kBlockBegin = "# brigade optimize: measurements (begin)";
constexpr std::string_view kBlockEnd = "# brigade optimize: measurements (end)";

bool ValidModelName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

absl::StatusOr<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read '", path.string(), "'"));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) return absl::InternalError(StrCat("--register: cannot write '", path.string(), "'"));
  return absl::OkStatus();
}

std::string Quote(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

// The repository config of the source model, when it sits at R/S/<version>/file with
// R/S/config.pbtxt: its path, else empty.
fs::path SourceConfig(const std::string& source_model_path) {
  const fs::path version_dir = fs::path(source_model_path).parent_path();
  const std::string version = version_dir.filename().string();
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  if (version.empty() || !std::all_of(version.begin(), version.end(), digit)) return {};
  std::error_code error;
  const fs::path config = version_dir.parent_path() / "config.pbtxt";
  return fs::is_regular_file(config, error) ? config : fs::path();
}

// The files a config names with label_filename, relative to its model folder.
std::vector<std::string> LabelFiles(const std::string& config) {
  std::vector<std::string> files;
  std::string_view rest = config;
  constexpr std::string_view kKey = "label_filename:";
  for (size_t at = rest.find(kKey); at != std::string_view::npos; at = rest.find(kKey)) {
    rest.remove_prefix(at + kKey.size());
    const size_t open = rest.find('"');
    const size_t close = open == std::string_view::npos ? open : rest.find('"', open + 1);
    if (close == std::string_view::npos) break;
    const std::string file(rest.substr(open + 1, close - open - 1));
    if (ValidModelName(file)) files.push_back(file);  // a plain file name, nothing outside
    rest.remove_prefix(close + 1);
  }
  return files;
}

bool IsOnnxConfig(const std::string& config) {
  return config.find("\"onnxruntime_onnx\"") != std::string::npos ||
         config.find("\"onnxruntime\"") != std::string::npos;
}

absl::Status CopyInto(const std::string& from, const fs::path& to) {
  std::error_code error;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
  if (error) {
    return absl::InternalError(
        StrCat("--register: cannot copy '", from, "' to '", to.string(), "': ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status FillVersion(const RegisterOptions& o, const fs::path& version_dir) {
  std::error_code error;
  if (!fs::create_directories(version_dir, error)) {
    return absl::InternalError(StrCat("--register: cannot create '", version_dir.string(), "'"));
  }
  BRIGADE_RETURN_IF_ERROR(CopyInto(o.model_file, version_dir / "model.onnx"));
  if (!o.torchscript_file.empty()) {
    BRIGADE_RETURN_IF_ERROR(CopyInto(o.torchscript_file, version_dir / "model.pt"));
  }
  return absl::OkStatus();
}

// The measurements plus the version they describe.
std::vector<std::pair<std::string, std::string>> Fields(const RegisterOptions& o, int64_t version) {
  std::vector<std::pair<std::string, std::string>> fields = o.fields;
  fields.insert(fields.begin(), {"version", StrCat(version)});
  return fields;
}

// Removes a path when it goes out of scope (the assembly folder after a failure).
struct RemoveGuard {
  fs::path path;
  ~RemoveGuard() {
    std::error_code error;
    if (!path.empty()) fs::remove_all(path, error);
  }
};

}  // namespace

std::string WithMeasurements(std::string config, const std::string& name,
                             const std::vector<std::pair<std::string, std::string>>& fields) {
  if (const size_t begin = config.find(kBlockBegin); begin != std::string::npos) {
    const size_t end = config.find(kBlockEnd, begin);
    const size_t stop = end == std::string::npos ? config.size() : end + kBlockEnd.size();
    config.erase(begin, stop - begin + (stop < config.size() && config[stop] == '\n' ? 1 : 0));
  }
  if (!name.empty()) {
    // The top-level name is the first line that starts with "name:" (nested names are indented).
    size_t line = 0;
    while (line < config.size() && config.compare(line, 5, "name:") != 0) {
      const size_t next = config.find('\n', line);
      line = next == std::string::npos ? config.size() : next + 1;
    }
    const std::string replacement = StrCat("name: ", Quote(name));
    if (line < config.size()) {
      const size_t end = config.find('\n', line);
      config.replace(line, (end == std::string::npos ? config.size() : end) - line, replacement);
    } else {
      config = StrCat(replacement, "\n", config);
    }
  }
  if (!config.empty() && config.back() != '\n') config += '\n';
  config += StrCat(kBlockBegin, "\n");
  for (const auto& [key, value] : fields) {
    config += StrCat("parameters {\n  key: ", Quote(StrCat("brigade_optimize.", key)),
                     "\n  value { string_value: ", Quote(value), " }\n}\n");
  }
  config += StrCat(kBlockEnd, "\n");
  return config;
}

absl::StatusOr<std::string> CheckRegisterTarget(const std::string& repository,
                                                const std::string& model_name) {
  std::error_code error;
  if (repository.empty() || !fs::is_directory(repository, error)) {
    return absl::NotFoundError(
        StrCat("--register: '", repository, "' is not a model repository folder"));
  }
  if (!ValidModelName(model_name)) {
    return absl::InvalidArgumentError(
        StrCat("--register-name: '", model_name,
               "' is not a model name (letters, digits, '_', '-', '.'; one folder inside "
               "the repository)"));
  }
  const fs::path root = fs::canonical(repository, error);
  const fs::path target = root / model_name;
  // A symlink named like the model could point anywhere: resolve it and stay inside the root.
  const fs::path resolved = fs::weakly_canonical(target, error);
  if (error || resolved.parent_path() != root) {
    return absl::InvalidArgumentError(StrCat("--register-name: '", model_name,
                                             "' resolves outside the repository '", root.string(),
                                             "'"));
  }
  return target.string();
}

absl::StatusOr<Registration> RegisterVariant(const RegisterOptions& o) {
  BRIGADE_ASSIGN_OR_RETURN(const std::string target_path,
                           CheckRegisterTarget(o.repository, o.model_name));
  const fs::path target(target_path);
  const fs::path root = target.parent_path();
  std::error_code error;
  Registration r;
  r.model_dir = target.string();
  const std::string pid = StrCat(getpid());
  if (!fs::exists(target, error)) {
    r.new_model = true;
    r.version = 1;
    const fs::path assembly = root / StrCat(".", o.model_name, ".tmp.", pid);
    fs::remove_all(assembly, error);
    RemoveGuard guard{assembly};
    BRIGADE_RETURN_IF_ERROR(FillVersion(o, assembly / "1"));
    std::string config = StrCat("platform: \"onnxruntime_onnx\"\n");
    if (const fs::path source = SourceConfig(o.source_model_path); !source.empty()) {
      BRIGADE_ASSIGN_OR_RETURN(config, ReadText(source));
      if (!IsOnnxConfig(config)) config = StrCat("platform: \"onnxruntime_onnx\"\n");
      for (const std::string& file : LabelFiles(config)) {
        if (fs::is_regular_file(source.parent_path() / file, error)) {
          BRIGADE_RETURN_IF_ERROR(
              CopyInto((source.parent_path() / file).string(), assembly / file));
        }
      }
    }
    BRIGADE_RETURN_IF_ERROR(
        WriteText(assembly / "config.pbtxt", WithMeasurements(config, o.model_name, Fields(o, 1))));
    fs::rename(assembly, target, error);
    if (error) {
      return absl::InternalError(StrCat("--register: cannot rename '", assembly.string(),
                                        "' onto '", target.string(), "': ", error.message()));
    }
    return r;
  }

  // A new version of an existing ONNX model.
  BRIGADE_ASSIGN_OR_RETURN(std::string config, ReadText(target / "config.pbtxt"));
  if (!IsOnnxConfig(config)) {
    return absl::InvalidArgumentError(StrCat("--register-name: model '", o.model_name,
                                             "' exists and is not an ONNX model; pick a new "
                                             "name"));
  }
  int64_t highest = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(target, error)) {
    int64_t v = 0;
    if (entry.is_directory(error) && ParseInteger(entry.path().filename().string(), &v)) {
      highest = std::max(highest, v);
    }
  }
  r.version = highest + 1;
  const fs::path assembly = target / StrCat(".", r.version, ".tmp.", pid);
  const fs::path config_temp = target / StrCat(".config.pbtxt.tmp.", pid);
  RemoveGuard guard{assembly};
  RemoveGuard config_guard{config_temp};
  BRIGADE_RETURN_IF_ERROR(FillVersion(o, assembly));
  BRIGADE_RETURN_IF_ERROR(
      WriteText(config_temp, WithMeasurements(config, "", Fields(o, r.version))));
  const fs::path version_dir = target / StrCat(r.version);
  fs::rename(assembly, version_dir, error);
  if (error) {
    return absl::InternalError(StrCat("--register: cannot rename '", assembly.string(), "' onto '",
                                      version_dir.string(), "': ", error.message()));
  }
  fs::rename(config_temp, target / "config.pbtxt", error);
  if (error) {
    return absl::InternalError(
        StrCat("--register: cannot replace '", (target / "config.pbtxt").string(), "'"));
  }
  return r;
}

}  // namespace brigade::optimize
