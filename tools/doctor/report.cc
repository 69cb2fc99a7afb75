#include "tools/doctor/report.h"

#include <array>
#include <string_view>

#include "core/json_text.h"
#include "core/strings.h"

namespace brigade::doctor {
namespace {

constexpr std::array<Verdict, 4> kVerdicts = {Verdict::kPass, Verdict::kWarn, Verdict::kFail,
                                              Verdict::kUnknown};

std::array<int, 4> Count(const std::vector<Finding>& findings) {
  std::array<int, 4> counts{};
  for (const Finding& finding : findings) ++counts[static_cast<size_t>(finding.verdict)];
  return counts;
}

// Evidence quotes host files, which promise no encoding: bytes that are not UTF-8 become '?', so
// the JSON stays valid.
void AppendJsonText(std::string_view text, std::string* out) {
  std::string clean;
  while (!text.empty()) {
    const size_t valid = ValidUtf8PrefixLength(text);
    clean.append(text.substr(0, valid));
    if (valid == text.size()) break;
    clean += '?';
    text.remove_prefix(valid + 1);
  }
  AppendJsonString(clean, out);
}

}  // namespace

std::string FormatText(const std::string& root, const std::vector<Finding>& findings) {
  const std::array<int, 4> counts = Count(findings);
  std::string out = StrCat("brigade doctor: ", root, ": ", counts[0], " pass, ", counts[1],
                           " warn, ", counts[2], " fail, ", counts[3], " unknown\n");
  for (const Finding& finding : findings) {
    std::string verdict(VerdictName(finding.verdict));
    for (char& c : verdict) c = static_cast<char>(c - 'a' + 'A');
    out += fmt::format("{:<7} {:<9} {}\n", verdict, finding.check, finding.summary);
    for (const std::string& line : finding.evidence) out += StrCat("        ", line, "\n");
    if (!finding.change.empty()) out += StrCat("        change: ", finding.change, "\n");
  }
  return out;
}

std::string FormatJson(const std::string& root, const std::vector<Finding>& findings) {
  const std::array<int, 4> counts = Count(findings);
  std::string out = "{\"root\":";
  AppendJsonText(root, &out);
  out += ",\"counts\":{";
  for (size_t i = 0; i < kVerdicts.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(VerdictName(kVerdicts[i]), &out);
    out += ':';
    AppendJsonInt(counts[i], &out);
  }
  out += "},\"checks\":[";
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& finding = findings[i];
    out += i > 0 ? ",{\"check\":" : "{\"check\":";
    AppendJsonString(finding.check, &out);
    out += ",\"verdict\":";
    AppendJsonString(VerdictName(finding.verdict), &out);
    out += ",\"summary\":";
    AppendJsonText(finding.summary, &out);
    out += ",\"evidence\":[";
    for (size_t e = 0; e < finding.evidence.size(); ++e) {
      if (e > 0) out += ',';
      AppendJsonText(finding.evidence[e], &out);
    }
    out += "],\"change\":";
    AppendJsonText(finding.change, &out);
    out += '}';
  }
  out += "]}\n";
  return out;
}

int ExitStatus(const std::vector<Finding>& findings) {
  for (const Finding& finding : findings) {
    if (finding.verdict == Verdict::kFail) return 1;
  }
  return 0;
}

}  // namespace brigade::doctor
