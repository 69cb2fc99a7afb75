#ifndef BRIGADE_TOOLS_DOCTOR_REPORT_H_
#define BRIGADE_TOOLS_DOCTOR_REPORT_H_

// The findings of `brigade doctor` as text (one block per check: verdict, check, summary, then
// the evidence and the change, indented) or as one JSON object:
//   {"root": "/", "counts": {"pass": 5, "warn": 2, "fail": 0, "unknown": 2},
//    "checks": [{"check": "smt", "verdict": "pass", "summary": "...", "evidence": ["..."],
//                "change": "..."}, ...]}
// and the exit status they call for: 1 when any check fails, else 0.
//
// Thread safety: pure functions.

#include <string>
#include <vector>

#include "tools/doctor/checks.h"

namespace brigade::doctor {

std::string FormatText(const std::string& root, const std::vector<Finding>& findings);
std::string FormatJson(const std::string& root, const std::vector<Finding>& findings);
int ExitStatus(const std::vector<Finding>& findings);

}  // namespace brigade::doctor

#endif  // BRIGADE_TOOLS_DOCTOR_REPORT_H_
