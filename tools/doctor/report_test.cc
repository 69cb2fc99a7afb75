#include "tools/doctor/report.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "simdjson.h"

namespace brigade::doctor {
namespace {

std::vector<Finding> TwoFindings(Verdict second) {
  return {Finding{.check = "smt",
                  .verdict = Verdict::kPass,
                  .summary = "SMT off",
                  .evidence = {"/sys/a: 0"},
                  .change = ""},
          Finding{.check = "blas",
                  .verdict = second,
                  .summary = "reference \"BLAS\"",
                  .evidence = {"x -> y", "bad byte \xff here"},
                  .change = "install OpenBLAS"}};
}

TEST(ReportTest, ExitStatusIsOneExactlyWhenACheckFails) {
  EXPECT_EQ(ExitStatus(TwoFindings(Verdict::kFail)), 1);
  EXPECT_EQ(ExitStatus(TwoFindings(Verdict::kWarn)), 0);
  EXPECT_EQ(ExitStatus(TwoFindings(Verdict::kUnknown)), 0);
}

TEST(ReportTest, TextHasTheCountsThenOneBlockPerCheckWithEvidenceAndChange) {
  const std::string text = FormatText("/", TwoFindings(Verdict::kFail));
  EXPECT_EQ(text.rfind("brigade doctor: /: 1 pass, 0 warn, 1 fail, 0 unknown\n", 0), 0u) << text;
  EXPECT_NE(text.find("PASS    smt       SMT off\n        /sys/a: 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL    blas      reference \"BLAS\"\n        x -> y\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("        change: install OpenBLAS\n"), std::string::npos) << text;
}

TEST(ReportTest, JsonParsesAndCarriesEveryFieldEvenWithBytesThatAreNotUtf8) {
  const std::string json = FormatJson("/fixture", TwoFindings(Verdict::kWarn));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(doc["root"]), "/fixture");
  EXPECT_EQ(int64_t(doc["counts"]["pass"]), 1);
  EXPECT_EQ(int64_t(doc["counts"]["warn"]), 1);
  EXPECT_EQ(int64_t(doc["counts"]["fail"]), 0);
  simdjson::dom::array checks = doc["checks"];
  ASSERT_EQ(checks.size(), 2u);
  simdjson::dom::element blas = checks.at(1);
  EXPECT_EQ(std::string_view(blas["check"]), "blas");
  EXPECT_EQ(std::string_view(blas["verdict"]), "warn");
  EXPECT_EQ(std::string_view(blas["summary"]), "reference \"BLAS\"");
  EXPECT_EQ(std::string_view(blas["evidence"].at(1)), "bad byte ? here");
  EXPECT_EQ(std::string_view(blas["change"]), "install OpenBLAS");
}

}  // namespace
}  // namespace brigade::doctor
