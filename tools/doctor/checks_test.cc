// The checks on the fixture hosts of testdata/ (see make_fixtures.sh for what each one is), and
// on a few hosts written here for the cases between them.

#include "tools/doctor/checks.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/cpu_affinity.h"
#include "tools/doctor/cgroup.h"
#include "tools/doctor/repository_plan.h"

namespace brigade::doctor {
namespace {

namespace fs = std::filesystem;
const std::string kTestdata = BRIGADE_DOCTOR_TESTDATA;

DoctorInputs Inputs(const std::string& repository = "") {
  DoctorInputs inputs;
  inputs.alignment = TensorAlignment{64, 64, 64};
  inputs.place = [](int index, int threads, const std::vector<int>& cpus) {
    return scheduler::InstanceCpus(index, threads, cpus);
  };
  if (!repository.empty()) {
    absl::StatusOr<std::vector<ModelPlan>> models =
        ReadRepositoryPlan(kTestdata + "/repositories/" + repository);
    EXPECT_TRUE(models.ok()) << models.status();
    if (models.ok()) inputs.models = *models;
    inputs.repository = repository;
  }
  return inputs;
}

std::map<std::string, Verdict> Verdicts(const std::vector<Finding>& findings) {
  std::map<std::string, Verdict> out;
  for (const Finding& finding : findings) out[finding.check] = finding.verdict;
  return out;
}

bool Mentions(const Finding& finding, const std::string& text) {
  if (finding.summary.find(text) != std::string::npos) return true;
  if (finding.change.find(text) != std::string::npos) return true;
  for (const std::string& line : finding.evidence) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string Describe(const Finding& f) {
  std::string out = f.check + " " + std::string(VerdictName(f.verdict)) + ": " + f.summary;
  for (const std::string& line : f.evidence) out += "\n  " + line;
  return out + "\n  change: " + f.change;
}

// A host written file by file into a temporary folder.
class TempHost {
 public:
  TempHost() : root_(fs::temp_directory_path() / ("doctor_host_" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
  }
  ~TempHost() { fs::remove_all(root_); }
  void Put(const std::string& path, const std::string& text) {
    const fs::path file = root_ / path.substr(1);
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  HostFiles host() const { return HostFiles(root_.string()); }

 private:
  fs::path root_;
};

TEST(DoctorFixturesTest, TunedHostWithPinnedModelsPassesEveryCheck) {
  const HostFiles host(kTestdata + "/tuned");
  const std::vector<Finding> findings = RunChecks(host, Inputs("pinned"));
  ASSERT_EQ(findings.size(), 10u);
  for (const Finding& finding : findings) {
    EXPECT_EQ(finding.verdict, Verdict::kPass) << Describe(finding);
    EXPECT_TRUE(finding.change.empty()) << Describe(finding);
  }
  EXPECT_TRUE(Mentions(findings[2], "avx512_core_amx")) << Describe(findings[2]);
  // The placement is the scheduler's: detector's two instances on 0-1 and 2-3 (node 0),
  // classifier's one on 4-7 (node 1).
  EXPECT_TRUE(Mentions(findings[3], "model 'detector' instance 1: cpus 2-3 (node 0)"))
      << Describe(findings[3]);
  EXPECT_TRUE(Mentions(findings[3], "model 'classifier' instance 0: cpus 4-7 (node 1)"))
      << Describe(findings[3]);
  EXPECT_TRUE(Mentions(findings[4], "8 compute thread(s)")) << Describe(findings[4]);
}

TEST(DoctorFixturesTest, SmtPowersaveHostWithReferenceBlasFails) {
  const HostFiles host(kTestdata + "/smt_powersave");
  const std::vector<Finding> findings = RunChecks(host, Inputs());
  const std::map<std::string, Verdict> verdicts = Verdicts(findings);
  EXPECT_EQ(verdicts.at("smt"), Verdict::kWarn);
  EXPECT_EQ(verdicts.at("cpufreq"), Verdict::kFail);
  EXPECT_EQ(verdicts.at("isa"), Verdict::kWarn);  // AVX2, no VNNI
  EXPECT_EQ(verdicts.at("numa"), Verdict::kPass);
  EXPECT_EQ(verdicts.at("threads"), Verdict::kUnknown);  // no repository
  EXPECT_EQ(verdicts.at("cpu_quota"), Verdict::kPass);   // v1, quota -1
  EXPECT_EQ(verdicts.at("blas"), Verdict::kFail);
  EXPECT_EQ(verdicts.at("thp"), Verdict::kWarn);
  EXPECT_EQ(verdicts.at("nofile"), Verdict::kFail);  // 1024 < 1024 + 64
  for (const Finding& f : findings) SCOPED_TRACE(Describe(f));
  EXPECT_TRUE(Mentions(findings[0], "thread_siblings_list: 0,2")) << Describe(findings[0]);
  EXPECT_TRUE(Mentions(findings[0], "cpus: [0-1]")) << Describe(findings[0]);
  EXPECT_TRUE(Mentions(findings[1], "scaling_max_freq: 2500000 (cpuinfo_max_freq 3300000)"))
      << Describe(findings[1]);
  EXPECT_TRUE(Mentions(findings[2], "no VNNI")) << Describe(findings[2]);
  EXPECT_TRUE(Mentions(findings[6], "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"))
      << Describe(findings[6]);
  EXPECT_TRUE(Mentions(findings[6], "openblas-pthread")) << Describe(findings[6]);
  EXPECT_TRUE(Mentions(findings[8], "ulimit -n 1088")) << Describe(findings[8]);
}

TEST(DoctorFixturesTest, ContainerWithSmallQuotaFailsOnTheDefaultThreadCounts) {
  const HostFiles host(kTestdata + "/container");
  // Without a repository the quota below the cores is a warning: the defaults would exceed it.
  EXPECT_EQ(CheckCpuQuota(host, Inputs()).verdict, Verdict::kWarn);
  const std::vector<Finding> findings = RunChecks(host, Inputs("defaults"));
  const std::map<std::string, Verdict> verdicts = Verdicts(findings);
  EXPECT_EQ(verdicts.at("smt"), Verdict::kPass);
  EXPECT_EQ(verdicts.at("cpufreq"), Verdict::kUnknown);  // no cpufreq in the VM
  EXPECT_EQ(verdicts.at("isa"), Verdict::kPass);
  EXPECT_EQ(verdicts.at("numa"), Verdict::kWarn);       // both models start at core 0
  EXPECT_EQ(verdicts.at("threads"), Verdict::kWarn);    // 2 x 16 threads on 16 cores
  EXPECT_EQ(verdicts.at("cpu_quota"), Verdict::kFail);  // 32 threads, 2 CPUs of quota
  EXPECT_EQ(verdicts.at("blas"), Verdict::kUnknown);
  EXPECT_EQ(verdicts.at("thp"), Verdict::kWarn);
  EXPECT_EQ(verdicts.at("nofile"), Verdict::kPass);
  EXPECT_TRUE(Mentions(findings[3], "cores 0-15 are pinned by several models"))
      << Describe(findings[3]);
  EXPECT_TRUE(Mentions(findings[4], "32 compute thread(s) over 3 model(s)"))
      << Describe(findings[4]);
  EXPECT_TRUE(Mentions(findings[5], "/sys/fs/cgroup/cpu.max: 200000 100000"))
      << Describe(findings[5]);
  EXPECT_TRUE(Mentions(findings[5], "at most 2")) << Describe(findings[5]);
}

TEST(DoctorFixturesTest, MoreThanTwiceTheCoresInThreadsFails) {
  const HostFiles host(kTestdata + "/smt_powersave");  // 4 logical CPUs
  DoctorInputs inputs = Inputs();
  inputs.models = std::vector<ModelPlan>{{.name = "a",
                                          .backend = "onnxruntime",
                                          .instances = 3,
                                          .intra_op_threads = 3,
                                          .cpus = {},
                                          .compute_threads = true}};
  EXPECT_EQ(CheckThreads(host, inputs).verdict, Verdict::kFail);  // 9 > 8
  (*inputs.models)[0].intra_op_threads = 2;
  EXPECT_EQ(CheckThreads(host, inputs).verdict, Verdict::kWarn);  // 6
  (*inputs.models)[0].instances = 2;
  EXPECT_EQ(CheckThreads(host, inputs).verdict, Verdict::kPass);  // 4
}

TEST(DoctorFixturesTest, BackendsWithoutAComputePoolCountOneThreadAndAreNotPlaced) {
  const HostFiles host(kTestdata + "/smt_powersave");  // 4 logical CPUs
  DoctorInputs inputs = Inputs();
  inputs.models = std::vector<ModelPlan>{{.name = "steps",
                                          .backend = "brigade_process",
                                          .instances = 4,
                                          .intra_op_threads = 0,
                                          .cpus = {},
                                          .compute_threads = false},
                                         {.name = "onnx",
                                          .backend = "onnxruntime",
                                          .instances = 1,
                                          .intra_op_threads = 0,
                                          .cpus = {},
                                          .compute_threads = true}};
  const Finding threads = CheckThreads(host, inputs);
  EXPECT_EQ(threads.verdict, Verdict::kWarn) << Describe(threads);  // 4 x 1 + 1 x 4 = 8
  EXPECT_TRUE(Mentions(threads, "8 compute thread(s)")) << Describe(threads);
  EXPECT_EQ(threads.evidence[1].find("model 'onnx'"), 0u) << Describe(threads);
  const Finding numa = CheckNuma(host, inputs);
  EXPECT_EQ(numa.verdict, Verdict::kPass) << Describe(numa);
  EXPECT_FALSE(Mentions(numa, "model 'steps'")) << Describe(numa);
}

TEST(DoctorChecksTest, PowersaveStillScalesUnderIntelPstate) {
  TempHost temp;
  temp.Put("/sys/devices/system/cpu/online", "0");
  temp.Put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave");
  temp.Put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", "intel_pstate");
  EXPECT_EQ(CheckCpufreq(temp.host()).verdict, Verdict::kWarn);
  temp.Put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", "acpi-cpufreq");
  EXPECT_EQ(CheckCpufreq(temp.host()).verdict, Verdict::kFail);
  temp.Put("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance");
  EXPECT_EQ(CheckCpufreq(temp.host()).verdict, Verdict::kPass);
}

TEST(DoctorChecksTest, TheTightestCpuMaxOfTheCgroupAndItsAncestorsWins) {
  TempHost temp;
  temp.Put("/proc/self/cgroup", "0::/kubepods/pod1/c1");
  temp.Put("/sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "max 100000");
  temp.Put("/sys/fs/cgroup/kubepods/pod1/cpu.max", "50000 100000");
  temp.Put("/sys/fs/cgroup/kubepods/cpu.max", "400000 100000");
  const CgroupCpu cgroup = ReadCgroupCpu(temp.host());
  ASSERT_TRUE(cgroup.known);
  ASSERT_TRUE(cgroup.quota_cpus.has_value());
  EXPECT_DOUBLE_EQ(*cgroup.quota_cpus, 0.5);
}

TEST(DoctorChecksTest, AHybridHostsV2TreeIsReadUnderUnified) {
  TempHost temp;
  temp.Put("/proc/self/cgroup", "1:cpu:/\n0::/job");
  temp.Put("/sys/fs/cgroup/unified/cgroup.controllers", "");
  temp.Put("/sys/fs/cgroup/unified/job/cpu.max", "300000 100000");
  const CgroupCpu cgroup = ReadCgroupCpu(temp.host());
  ASSERT_TRUE(cgroup.quota_cpus.has_value());
  EXPECT_DOUBLE_EQ(*cgroup.quota_cpus, 3.0);
}

TEST(DoctorChecksTest, CpuMaxParsesQuotaAndMaxAndRefusesJunk) {
  EXPECT_DOUBLE_EQ(**ParseCpuMax("150000 100000"), 1.5);
  EXPECT_FALSE(ParseCpuMax("max 100000")->has_value());
  for (const char* bad : {"", "max", "x 100000", "100 0", "-5 100000"}) {
    EXPECT_FALSE(ParseCpuMax(bad).ok()) << bad;
  }
}

TEST(DoctorChecksTest, TheEngineUsingLessThanTheCpuOffersWarns) {
  const HostFiles host(kTestdata + "/tuned");  // offers avx512_core_amx
  EXPECT_EQ(CheckIsa(host, EngineIsa{"avx512_core_amx", true}).verdict, Verdict::kPass);
  const Finding capped = CheckIsa(host, EngineIsa{"avx2", false});
  EXPECT_EQ(capped.verdict, Verdict::kWarn) << Describe(capped);
  EXPECT_TRUE(Mentions(capped, "the engine uses only avx2")) << Describe(capped);
}

TEST(DoctorChecksTest, BuffersAlignedBelowTheWidestVectorWarn) {
  const HostFiles avx512(kTestdata + "/tuned");
  const HostFiles avx2(kTestdata + "/smt_powersave");
  EXPECT_EQ(CheckAlignment(avx512, TensorAlignment{64, 64, 64}).verdict, Verdict::kPass);
  const Finding low = CheckAlignment(avx512, TensorAlignment{64, 0, 32});
  EXPECT_EQ(low.verdict, Verdict::kWarn) << Describe(low);
  EXPECT_TRUE(Mentions(low, "request bodies (binary tensors): 32-byte aligned")) << Describe(low);
  EXPECT_FALSE(Mentions(low, "engine arenas")) << Describe(low);  // 0: no engine
  EXPECT_EQ(CheckAlignment(avx2, TensorAlignment{32, 32, 32}).verdict, Verdict::kPass);
  EXPECT_EQ(CheckAlignment(avx2, std::nullopt).verdict, Verdict::kUnknown);
}

TEST(DoctorChecksTest, NoAvx2Fails) {
  TempHost temp;
  temp.Put("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse sse2 sse4_1 avx\n");
  const Finding f = CheckIsa(temp.host(), std::nullopt);
  EXPECT_EQ(f.verdict, Verdict::kFail) << Describe(f);
  EXPECT_TRUE(Mentions(f, "best: avx")) << Describe(f);
}

TEST(DoctorChecksTest, MissingFilesAreUnknownNotPass) {
  TempHost temp;
  temp.Put("/etc/hostname", "empty");
  const std::map<std::string, Verdict> verdicts = Verdicts(RunChecks(temp.host(), Inputs()));
  for (const char* check :
       {"smt", "cpufreq", "isa", "threads", "cpu_quota", "blas", "thp", "nofile", "alignment"}) {
    EXPECT_EQ(verdicts.at(check), Verdict::kUnknown) << check;
  }
}

TEST(RepositoryPlanTest, CountsInstancesThreadsAndCpusAsTheServerDoes) {
  absl::StatusOr<std::vector<ModelPlan>> plans =
      ReadRepositoryPlan(kTestdata + "/repositories/pinned");
  ASSERT_TRUE(plans.ok()) << plans.status();
  ASSERT_EQ(plans->size(), 2u);
  EXPECT_EQ((*plans)[0].name, "classifier");
  EXPECT_EQ((*plans)[0].backend, "pytorch_libtorch");
  EXPECT_EQ((*plans)[1].instances, 2);
  EXPECT_EQ((*plans)[1].intra_op_threads, 2);
  EXPECT_EQ((*plans)[1].cpus, (std::vector<int>{0, 1, 2, 3}));
  absl::StatusOr<std::vector<ModelPlan>> defaults =
      ReadRepositoryPlan(kTestdata + "/repositories/defaults");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ((*defaults)[2].name, "pipeline");
  EXPECT_EQ((*defaults)[2].instances, 0);  // an ensemble runs none
  EXPECT_EQ((*defaults)[0].instances, 1);  // no instance_group: one
}

TEST(RepositoryPlanTest, NamesTheModelAndFieldOfAnImpossibleCount) {
  TempHost temp;
  temp.Put("/m/config.pbtxt", "name: \"m\"\ninstance_group [ { count: 100000 } ]");
  const absl::StatusOr<std::vector<ModelPlan>> plans = ReadRepositoryPlan(temp.host().root());
  EXPECT_EQ(plans.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plans.status().message().find("model 'm' instance_group[0].count 100000"),
            std::string::npos)
      << plans.status();
  EXPECT_EQ(ReadRepositoryPlan(temp.host().root() + "/none").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace brigade::doctor
