#include "repository/model_repository.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "absl/synchronization/notification.h"
#include "cache/cache_manager.h"
#include "core/strings.h"
#include "engine/builtin/builtin_backend.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace brigade::repository {
namespace {

namespace fs = std::filesystem;

constexpr char kIdentityConfig[] = R"pb(
  backend: "brigade"
  max_batch_size: 8 input
  [ {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }]
)pb";

class RepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("brigade_repo_test_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    backends_.Register(std::make_unique<engine::BuiltinBackend>());
  }
  void TearDown() override { fs::remove_all(root_); }

  void WriteModel(const std::string& name, const std::string& config,
                  std::vector<int> versions = {1}) {
    fs::create_directories(root_ / name);
    std::ofstream(root_ / name / "config.pbtxt") << config;
    for (int version : versions) fs::create_directories(root_ / name / std::to_string(version));
  }

  ModelRepository::Options Options(ControlMode mode) {
    ModelRepository::Options options;
    options.root = root_.string();
    options.mode = mode;
    options.poll_interval = absl::Hours(1);  // tests call Poll() themselves
    options.backends = &backends_;
    options.pin_threads = false;
    return options;
  }

  fs::path root_;
  engine::BackendRegistry backends_;
};

TEST_F(RepositoryTest, NoneModeLoadsEveryModelAndServesTheHighestVersion) {
  WriteModel("a", kIdentityConfig, {1, 2});
  WriteModel("b", kIdentityConfig);
  std::vector<absl::Status> errors;
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_TRUE(errors.empty());
  auto a = (*repo)->Get("a", -1);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->version(), 2);
  EXPECT_EQ((*repo)->Get("a", 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*repo)->Get("zzz", -1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*repo)->Get("b", 1).ok());
}

TEST_F(RepositoryTest, LoadedConfigIsCompletedWithPlatform) {
  WriteModel("a", kIdentityConfig);
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), nullptr);
  auto a = (*repo)->Get("a", -1);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->platform(), "brigade_builtin");
  EXPECT_EQ((*a)->inputs()[0].shape, (Shape{-1, 4}));
}

TEST_F(RepositoryTest, ABrokenModelIsReportedAndTheOthersStillLoad) {
  WriteModel("good", kIdentityConfig);
  WriteModel("bad_syntax", "max_batch_size: \"x\"");
  WriteModel("bad_backend", "platform: \"tensorrt_plan\"");
  std::vector<absl::Status> errors;
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_TRUE(repo.ok());
  EXPECT_EQ(errors.size(), 2u);
  EXPECT_TRUE((*repo)->Get("good", -1).ok());
  EXPECT_EQ((*repo)->Get("bad_syntax", -1).status().code(), absl::StatusCode::kUnavailable);
  bool saw_reason = false;
  for (const protocol::RepositoryIndexEntry& entry : (*repo)->Index(false)) {
    if (entry.name == "bad_backend") {
      EXPECT_EQ(entry.state, "UNAVAILABLE");
      saw_reason = entry.reason.find("tensorrt_plan") != std::string::npos;
    }
  }
  EXPECT_TRUE(saw_reason);
  EXPECT_EQ((*repo)->Index(true).size(), 1u);
}

TEST_F(RepositoryTest, AnInvalidConfigIsLoggedNamingItsModelOnce) {
  WriteModel("bad_dims", R"pb(
    backend: "brigade"
    max_batch_size: 0 input
    [ {
      name: "INPUT0"
      data_type: TYPE_FP32
      dims: [ -7 ]
    }] output
    [ {
      name: "OUTPUT0"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }]
  )pb");
  std::ostringstream log;
  const std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), nullptr);
  spdlog::set_default_logger(previous);
  ASSERT_TRUE(repo.ok());
  EXPECT_NE(log.str().find("model 'bad_dims': input 'INPUT0' has invalid dims [-7]"),
            std::string::npos)
      << log.str();
  EXPECT_EQ(log.str().find("model 'bad_dims': model 'bad_dims'"), std::string::npos) << log.str();
}

TEST_F(RepositoryTest, ExplicitModeLoadsOnlyWhatIsAskedFor) {
  WriteModel("a", kIdentityConfig);
  WriteModel("b", kIdentityConfig);
  ModelRepository::Options options = Options(ControlMode::kExplicit);
  options.startup_models = {"a"};
  auto repo = ModelRepository::Create(options, nullptr);
  ASSERT_TRUE(repo.ok());
  EXPECT_TRUE((*repo)->Get("a", -1).ok());
  EXPECT_FALSE((*repo)->Get("b", -1).ok());
  ASSERT_TRUE((*repo)->Load("b", "").ok());
  EXPECT_TRUE((*repo)->Get("b", -1).ok());
  ASSERT_TRUE((*repo)->Unload("a").ok());
  EXPECT_EQ((*repo)->Get("a", -1).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ((*repo)->Load("nope", "").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*repo)->Unload("nope").code(), absl::StatusCode::kNotFound);
}

TEST_F(RepositoryTest, LoadAndUnloadNeedExplicitMode) {
  WriteModel("a", kIdentityConfig);
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), nullptr);
  EXPECT_EQ((*repo)->Load("a", "").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*repo)->Unload("a").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(RepositoryTest, LoadWithAConfigOverride) {
  WriteModel("a", kIdentityConfig);
  auto repo = ModelRepository::Create(Options(ControlMode::kExplicit), nullptr);
  ASSERT_TRUE((*repo)
                  ->Load("a", R"({"backend":"brigade","max_batch_size":2,
                      "input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[3]}]})")
                  .ok());
  auto a = (*repo)->Get("a", -1);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->max_batch_size(), 2);
  EXPECT_EQ((*a)->inputs()[0].dtype, DataType::kInt32);
}

// Issue 21 item 3: a name that is not one the repository lists is refused before anything is
// looked up; ".hidden" (a directory the index does not list) used to load.
TEST_F(RepositoryTest, ALoadNamesOnlyAModelDirectoryTheRepositoryLists) {
  WriteModel("a", kIdentityConfig);
  WriteModel(".hidden", kIdentityConfig);
  auto repo = ModelRepository::Create(Options(ControlMode::kExplicit), nullptr);
  ASSERT_TRUE(repo.ok()) << repo.status();
  for (std::string_view name : {".hidden", "../a", "./a", "a/", "/etc", "http://host/a",
                                "file:///etc", "..", ".", "", "a/1"}) {
    absl::Status status = (*repo)->Load(name, "");
    EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << name << ": " << status;
    EXPECT_NE(status.message().find("is not in the repository"), std::string::npos) << status;
  }
  EXPECT_FALSE((*repo)->Find(".hidden").ok());
  EXPECT_TRUE((*repo)->Load("a", "").ok());
}

// Issue 21 D3: an override naming files used to load `default_model_filename` wherever it
// pointed.
TEST_F(RepositoryTest, AConfigOverrideMayNotNameFiles) {
  WriteModel("a", kIdentityConfig);
  std::ofstream(root_ / "outside.bin") << "not a model";
  auto repo = ModelRepository::Create(Options(ControlMode::kExplicit), nullptr);
  ASSERT_TRUE(repo.ok()) << repo.status();
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"backend":"brigade","default_model_filename":"../../outside.bin"})",
       "(default_model_filename)"},
      {R"({"backend":"brigade","output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[4],
           "label_filename":"../outside.bin"}]})",
       "(output 'OUTPUT0' label_filename)"},
      {R"({"backend":"brigade","model_warmup":[{"name":"w","inputs":{"INPUT0":{
           "data_type":"TYPE_FP32","dims":[4],"input_data_file":"x.bin"}}}]})",
       "(warm-up 'w' input 'INPUT0' input_data_file)"},
  };
  for (const auto& [json, field] : cases) {
    absl::Status status = (*repo)->Load("a", json);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(std::string(status.message()).find(field), std::string::npos) << status;
  }
  EXPECT_FALSE((*repo)->Get("a", -1).ok());
}

// Issue 21 D3: a config.pbtxt's default_model_filename resolves inside its version directory.
TEST_F(RepositoryTest, ADefaultModelFilenameMustResolveInsideTheVersionDirectory) {
  std::ofstream(root_ / "outside.bin") << "not a model";
  const std::string config = kIdentityConfig;
  WriteModel("up", config + R"(default_model_filename: "../../outside.bin")");
  WriteModel("absolute",
             config + "default_model_filename: \"" + (root_ / "outside.bin").string() + "\"");
  WriteModel("link", config + R"(default_model_filename: "model.bin")");
  fs::create_symlink(root_ / "outside.bin", root_ / "link" / "1" / "model.bin");
  WriteModel("inside", config + R"(default_model_filename: "sub/model.bin")");
  fs::create_directories(root_ / "inside" / "1" / "sub");
  std::ofstream(root_ / "inside" / "1" / "sub" / "model.bin") << "builtin";
  std::vector<absl::Status> errors;
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_TRUE((*repo)->Get("inside", 1).ok());
  auto code = [&](std::string_view name) {
    for (const absl::Status& error : errors) {
      if (error.message().find(StrCat("model '", name, "'")) != std::string::npos) {
        return error.code();
      }
    }
    return absl::StatusCode::kOk;
  };
  EXPECT_EQ(code("up"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(code("absolute"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("link"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(errors.size(), 3u);
  for (std::string_view name : {"up", "absolute", "link"}) {
    EXPECT_FALSE((*repo)->Get(name, 1).ok()) << name;
  }
}

// Issue 21 D7: add_sub over inputs of different shapes refuses every request, the automatic
// warm-up's zeros first; the model used to be READY anyway ("serving anyway").
TEST_F(RepositoryTest, AModelFailingItsAutomaticWarmUpDoesNotLoad) {
  WriteModel("mismatched", R"pb(
    backend: "brigade"
    max_batch_size: 4 input
    [ {
      name: "INPUT0"
      data_type: TYPE_FP32
      dims: [ 2 ]
    }
      , {
        name: "INPUT1"
        data_type: TYPE_FP32
        dims: [ 3 ]
      }]
    parameters {
      key: "op"
      value { string_value: "add_sub" }
    }
  )pb");
  std::vector<absl::Status> errors;
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_TRUE(repo.ok()) << repo.status();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].code(), absl::StatusCode::kInvalidArgument) << errors[0];
  EXPECT_NE(errors[0].message().find("warm-up 'zeros at batch size 1' failed"), std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].message().find("must have the same type and shape"), std::string::npos)
      << errors[0];
  EXPECT_EQ((*repo)->Get("mismatched", -1).status().code(), absl::StatusCode::kUnavailable);
  const std::vector<protocol::RepositoryIndexEntry> index = (*repo)->Index(false);
  ASSERT_EQ(index.size(), 1u);
  EXPECT_EQ(index[0].state, "UNAVAILABLE");
}

// Issue 21 D11: a model directory linked in from elsewhere on the host used to be served like
// any other; now only with allow_symlinked_models. A link to another model of the repository
// stays inside it and is served either way.
TEST_F(RepositoryTest, AModelDirectoryLinkedFromOutsideIsRefusedUnlessAllowed) {
  WriteModel("a", kIdentityConfig);
  const fs::path elsewhere = fs::path(root_.string() + "_elsewhere");
  fs::remove_all(elsewhere);
  fs::create_directories(elsewhere / "outside" / "1");
  std::ofstream(elsewhere / "outside" / "config.pbtxt") << kIdentityConfig;
  fs::create_symlink(elsewhere / "outside", root_ / "linked");
  fs::create_symlink(root_ / "a", root_ / "alias");  // kIdentityConfig names no model
  for (bool allowed : {false, true}) {
    ModelRepository::Options options = Options(ControlMode::kNone);
    options.allow_symlinked_models = allowed;
    std::vector<absl::Status> errors;
    auto repo = ModelRepository::Create(options, &errors);
    ASSERT_TRUE(repo.ok()) << repo.status();
    EXPECT_TRUE((*repo)->Get("a", 1).ok());
    EXPECT_TRUE((*repo)->Get("alias", 1).ok());
    if (allowed) {
      EXPECT_TRUE(errors.empty());
      EXPECT_TRUE((*repo)->Get("linked", 1).ok());
      continue;
    }
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].code(), absl::StatusCode::kPermissionDenied) << errors[0];
    EXPECT_NE(errors[0].message().find("model 'linked': its directory is a symbolic link to"),
              std::string::npos)
        << errors[0];
    EXPECT_NE(errors[0].message().find("--allow-symlinked-models"), std::string::npos);
    EXPECT_FALSE((*repo)->Get("linked", 1).ok());
    bool listed = false;
    for (const protocol::RepositoryIndexEntry& entry : (*repo)->Index(false)) {
      if (entry.name != "linked") continue;
      listed = true;
      EXPECT_NE(entry.reason.find("outside the repository"), std::string::npos) << entry.reason;
    }
    EXPECT_TRUE(listed);
  }
  fs::remove_all(elsewhere);
}

TEST_F(RepositoryTest, PollLoadsNewVersionsAndRetiresOldOnes) {
  WriteModel("a", kIdentityConfig, {1});
  auto repo = ModelRepository::Create(Options(ControlMode::kPoll), nullptr);
  ASSERT_EQ((*(*repo)->Get("a", -1))->version(), 1);
  fs::create_directories(root_ / "a" / "2");
  WriteModel("c", kIdentityConfig);
  ASSERT_TRUE((*repo)->Poll().ok());
  EXPECT_EQ((*(*repo)->Get("a", -1))->version(), 2);
  EXPECT_EQ((*repo)->Get("a", 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*repo)->Get("c", -1).ok());
  fs::remove_all(root_ / "c");
  ASSERT_TRUE((*repo)->Poll().ok());
  EXPECT_EQ((*repo)->Get("c", -1).status().code(), absl::StatusCode::kNotFound);
}

// Issue 20: a new version directory seen by a scan before its model file was copied in failed to
// load, and the version it replaced was retired anyway: the model had nothing ready until the
// next scan, and every request in between failed.
TEST_F(RepositoryTest, AVersionSeenBeforeItsFileIsCopiedLeavesThePreviousOneServing) {
  WriteModel("a", std::string(kIdentityConfig) + "default_model_filename: \"model.bin\"", {1});
  std::ofstream(root_ / "a" / "1" / "model.bin") << "builtin";
  auto repo = ModelRepository::Create(Options(ControlMode::kPoll), nullptr);
  ASSERT_TRUE(repo.ok()) << repo.status();
  fs::create_directories(root_ / "a" / "2");  // the copy has made the directory only
  EXPECT_EQ((*repo)->Poll().code(), absl::StatusCode::kNotFound);
  auto serving = (*repo)->Get("a", -1);
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_EQ((*serving)->version(), 1);
  std::map<std::string, std::string> states;
  for (const protocol::RepositoryIndexEntry& entry : (*repo)->Index(false)) {
    states[entry.version] = entry.state;
  }
  EXPECT_EQ(states["1"], "READY");
  EXPECT_EQ(states["2"], "UNAVAILABLE");

  std::ofstream(root_ / "a" / "2" / "model.bin") << "builtin";  // the copy completes
  ASSERT_TRUE((*repo)->Poll().ok());
  EXPECT_EQ((*(*repo)->Get("a", -1))->version(), 2);
  EXPECT_EQ((*repo)->Get("a", 1).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RepositoryTest, AChangedConfigReloadsAndQueuedRequestsOnTheOldLoadFinish) {
  // Declared first: the repository (and the queued request's callback) must not outlive them.
  absl::Notification answered;
  absl::Status answer = absl::UnknownError("not answered");
  // A one-minute batching delay keeps the request queued on the old load until it is drained.
  WriteModel("a", std::string(kIdentityConfig) +
                      "dynamic_batching { max_queue_delay_microseconds: 60000000 }");
  auto repo = ModelRepository::Create(Options(ControlMode::kPoll), nullptr);
  auto old = (*repo)->Get("a", -1);
  ASSERT_TRUE(old.ok());

  auto request = std::make_unique<InferRequest>();
  std::vector<float> values = {1, 2, 3, 4};
  request->inputs.push_back({"INPUT0", *Tensor::FromValues<float>({1, 4}, values), {}});
  request->on_complete = [&](absl::StatusOr<InferResponse> result) {
    answer = result.status();
    answered.Notify();
  };
  (*old)->Enqueue(std::move(request));
  EXPECT_FALSE(answered.HasBeenNotified());

  WriteModel("a", R"pb(
    backend: "brigade"
    max_batch_size: 4 input
    [ {
      name: "INPUT0"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }]
  )pb");
  ASSERT_TRUE((*repo)->Poll().ok());
  answered.WaitForNotification();
  EXPECT_TRUE(answer.ok()) << answer;
  auto fresh = (*repo)->Get("a", -1);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->get(), old->get());
  EXPECT_EQ((*fresh)->max_batch_size(), 4);
}

TEST_F(RepositoryTest, AFailedReloadLeavesThePreviousLoadServing) {
  WriteModel("a", kIdentityConfig);
  auto repo = ModelRepository::Create(Options(ControlMode::kPoll), nullptr);
  auto old = (*repo)->Get("a", -1);
  WriteModel("a", std::string(kIdentityConfig) +
                      "parameters { key: \"op\" value { string_value: \"bogus\" } }");
  EXPECT_FALSE((*repo)->Poll().ok());
  auto still = (*repo)->Get("a", -1);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->get(), old->get());
  bool reported = false;
  for (const protocol::RepositoryIndexEntry& entry : (*repo)->Index(false)) {
    reported |= entry.reason.find("bogus") != std::string::npos && entry.state == "READY";
  }
  EXPECT_TRUE(reported);
}

TEST_F(RepositoryTest, ConfigInputsMustExistInTheModel) {
  WriteModel("a", R"pb(
    backend: "brigade"
    parameters {
      key: "op"
      value { string_value: "add_sub" }
    } input
    [ {
      name: "INPUT0"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }]
  )pb");
  std::vector<absl::Status> errors;
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message().find("two inputs"), std::string::npos) << errors[0];
}

TEST_F(RepositoryTest, AServedModelCarriesTheCacheItsConfigAsksForThroughEveryChange) {
  const std::string cached = std::string(kIdentityConfig) + "response_cache { enable: true }";
  WriteModel("a", cached, {1, 2});
  auto caches = cache::CacheManager::Create({});
  ASSERT_TRUE(caches.ok()) << caches.status();
  ModelRepository::Options options = Options(ControlMode::kExplicit);
  options.startup_models = {"a"};
  options.caches = caches->get();
  auto repo = ModelRepository::Create(options, nullptr);
  ASSERT_TRUE(repo.ok()) << repo.status();
  const std::shared_ptr<cache::ResponseCache> first = (*(*repo)->Find("a"))->cache();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ((*(*repo)->Find("a"))->ReadyVersions(), (std::vector<int64_t>{2}));

  // A load that leaves the cache settings alone keeps the cache, and its entries.
  ASSERT_TRUE((*repo)->Load("a", "").ok());
  EXPECT_EQ((*(*repo)->Find("a"))->cache(), first);
  // New settings: a new, empty cache; requests holding the old one finish with it.
  WriteModel("a", std::string(kIdentityConfig) + "response_cache { enable: true ttl_ms: 5000 }",
             {1, 2});
  ASSERT_TRUE((*repo)->Load("a", "").ok());
  const std::shared_ptr<cache::ResponseCache> second = (*(*repo)->Find("a"))->cache();
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first);
  EXPECT_EQ(second->options().ttl_ms, 5000);
  // Caching turned off, then the model unloaded: no cache either way.
  WriteModel("a", kIdentityConfig, {1, 2});
  ASSERT_TRUE((*repo)->Load("a", "").ok());
  EXPECT_EQ((*(*repo)->Find("a"))->cache(), nullptr);
  WriteModel("a", cached, {1, 2});
  ASSERT_TRUE((*repo)->Load("a", "").ok());
  ASSERT_NE((*(*repo)->Find("a"))->cache(), nullptr);
  ASSERT_TRUE((*repo)->Unload("a").ok());
  EXPECT_EQ((*(*repo)->Find("a"))->cache(), nullptr);
  EXPECT_EQ((*repo)->Get("a", -1).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(RepositoryTest, ABadOrUnservableResponseCacheSectionFailsTheLoadNamingTheModel) {
  WriteModel("bad",
             std::string(kIdentityConfig) + "response_cache { enable: true ttl_ms: 99999999999 }");
  WriteModel("cached", std::string(kIdentityConfig) + "response_cache { enable: true }");
  std::vector<absl::Status> errors;
  // No cache manager: a model that asks for a cache cannot be served as configured.
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_TRUE(repo.ok()) << repo.status();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(std::string(errors[0].message()).find("'bad'"), std::string::npos) << errors[0];
  EXPECT_NE(std::string(errors[1].message()).find("'cached'"), std::string::npos) << errors[1];
  EXPECT_NE(std::string(errors[1].message()).find("response cache"), std::string::npos);
  EXPECT_FALSE((*repo)->Get("bad", -1).ok());
  EXPECT_FALSE((*repo)->Get("cached", -1).ok());
}

TEST_F(RepositoryTest, FingerprintsAgreeAcrossLoadsAndChangeWithTheFiles) {
  WriteModel("a", kIdentityConfig);
  auto repo = ModelRepository::Create(Options(ControlMode::kPoll), nullptr);
  const std::string a = (*(*repo)->Get("a", -1))->fingerprint();
  EXPECT_EQ(a.size(), 16u);
  // Another process loading the same files computes the same fingerprint.
  auto other = ModelRepository::Create(Options(ControlMode::kNone), nullptr);
  EXPECT_EQ((*(*other)->Get("a", -1))->fingerprint(), a);
  std::ofstream(root_ / "a" / "1" / "weights.bin") << "new weights";
  ASSERT_TRUE((*repo)->Poll().ok());
  EXPECT_NE((*(*repo)->Get("a", -1))->fingerprint(), a);
}

TEST_F(RepositoryTest, AMissingRepositoryFailsCreate) {
  ModelRepository::Options options = Options(ControlMode::kNone);
  options.root = (root_ / "does_not_exist").string();
  EXPECT_EQ(ModelRepository::Create(options, nullptr).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RepositoryTest, EnsemblesAndRoutersLoadAfterTheModelsTheyNameWhateverTheirNames) {
  // Directory order would load "a_ensemble" and "b_router" before "z_step".
  WriteModel("z_step", kIdentityConfig);
  WriteModel("b_router", R"pb(
    name: "b_router"
    platform: "brigade_router"
    routing { variant { model_name: "z_step" } })pb");
  WriteModel("a_ensemble", R"pb(
    name: "a_ensemble"
    platform: "ensemble"
    max_batch_size: 8
    input {
      name: "IN"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }
    output {
      name: "OUT"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }
    ensemble_scheduling {
      step {
        model_name: "b_router"
        input_map { key: "INPUT0" value: "IN" }
        output_map { key: "OUTPUT0" value: "OUT" }
      }
    })pb");
  std::vector<absl::Status> errors;
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_TRUE(repo.ok()) << repo.status();
  for (const absl::Status& error : errors) ADD_FAILURE() << error;
  auto ensemble = (*repo)->Get("a_ensemble", -1);
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  ASSERT_NE((*ensemble)->ensemble(), nullptr);
  EXPECT_EQ((*ensemble)->queue_size(), 0u);
  EXPECT_FALSE((*ensemble)->scheduler_snapshot().has_value());
  auto router = (*repo)->Get("b_router", -1);
  ASSERT_TRUE(router.ok()) << router.status();
  ASSERT_NE((*router)->routing(), nullptr);
  // The router took its variant's signature.
  ASSERT_EQ((*router)->inputs().size(), 1u);
  EXPECT_EQ((*router)->inputs()[0].name, "INPUT0");
  EXPECT_EQ((*router)->max_batch_size(), 8);
}

TEST_F(RepositoryTest, AnEnsembleNamingAMissingModelFailsAloneNamingTheStep) {
  WriteModel("step", kIdentityConfig);
  WriteModel("broken", R"pb(
    name: "broken"
    platform: "ensemble"
    max_batch_size: 8
    input {
      name: "IN"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }
    output {
      name: "OUT"
      data_type: TYPE_FP32
      dims: [ 4 ]
    }
    ensemble_scheduling {
      step {
        model_name: "missing"
        input_map { key: "INPUT0" value: "IN" }
        output_map { key: "OUTPUT0" value: "OUT" }
      }
    })pb");
  std::vector<absl::Status> errors;
  auto repo = ModelRepository::Create(Options(ControlMode::kNone), &errors);
  ASSERT_TRUE(repo.ok());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message().find("ensemble 'broken': step 1 (model 'missing')"),
            std::string::npos)
      << errors[0];
  EXPECT_TRUE((*repo)->Get("step", -1).ok());
  EXPECT_EQ((*repo)->Get("broken", -1).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace brigade::repository
