#include "route/ensemble_plan.h"

#include <map>
#include <string>

#include "core/strings.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace brigade::route {
namespace {

// Models the tests' ensembles are built from: "pre" (RAW BYTES -> IMAGE FP32 [3]), "classify"
// (IMAGE -> SCORES FP32 [10]), "segment" (IMAGE -> MASK FP32 [3]), "merge" (A, B -> OUT), all
// batching up to 8; "nobatch" does not batch.
absl::StatusOr<StepModelSignature> Lookup(std::string_view model, int64_t /*version*/) {
  auto fp32 = [](std::string name, Shape dims) {
    Shape shape{-1};
    shape.insert(shape.end(), dims.begin(), dims.end());
    return TensorSignature{std::move(name), DataType::kFp32, shape, false};
  };
  static const auto* models = new std::map<std::string, StepModelSignature, std::less<>>{
      {"pre",
       {8, {{"RAW", DataType::kBytes, {-1, 1}, false}}, {fp32("IMAGE", {3}), fp32("EXTRA", {1})}}},
      {"classify", {8, {fp32("IMAGE", {3})}, {fp32("SCORES", {10})}}},
      {"segment", {8, {fp32("IMAGE", {3})}, {fp32("MASK", {3})}}},
      {"merge", {8, {fp32("A", {3}), fp32("B", {3})}, {fp32("OUT", {3})}}},
      {"nobatch", {0, {{"IMAGE", DataType::kFp32, {3}, false}}, {{"Y", DataType::kFp32, {3}}}}},
  };
  auto it = models->find(model);
  if (it == models->end()) return absl::NotFoundError(StrCat("no model '", model, "'"));
  return it->second;
}

config::ModelConfig Parse(std::string_view text) {
  config::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text), &config)) << text;
  return config;
}

// Triton's documented shape of an ensemble: a preprocessing step feeding two models that both
// read its output (so they may run at once).
constexpr std::string_view kDiamond = R"pb(
  name: "diamond"
  platform: "ensemble"
  max_batch_size: 8
  input {
    name: "IMAGE_BYTES"
    data_type: TYPE_STRING
    dims: [ 1 ]
  }
  output {
    name: "CLASSIFICATION"
    data_type: TYPE_FP32
    dims: [ 10 ]
  }
  output {
    name: "SEGMENTATION"
    data_type: TYPE_FP32
    dims: [ 3 ]
  }
  ensemble_scheduling {
    step {
      model_name: "pre"
      model_version: -1
      input_map { key: "RAW" value: "IMAGE_BYTES" }
      output_map { key: "IMAGE" value: "preprocessed" }
    }
    step {
      model_name: "classify"
      model_version: -1
      input_map { key: "IMAGE" value: "preprocessed" }
      output_map { key: "SCORES" value: "CLASSIFICATION" }
    }
    step {
      model_name: "segment"
      model_version: -1
      input_map { key: "IMAGE" value: "preprocessed" }
      output_map { key: "MASK" value: "SEGMENTATION" }
    }
  }
)pb";

std::string CreateError(std::string_view text) {
  absl::StatusOr<std::shared_ptr<const EnsemblePlan>> plan =
      EnsemblePlan::Create(Parse(text), Lookup);
  EXPECT_FALSE(plan.ok());
  if (plan.ok()) return "";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(plan.status().message());
}

std::string WithStep(std::string_view base, std::string_view extra_step) {
  std::string text(base);
  const size_t end = text.rfind('}');
  text.insert(end, StrCat("step {", extra_step, "}\n"));
  return text;
}

TEST(EnsemblePlanTest, TritonsDiamondCompilesIntoDependencies) {
  auto plan = EnsemblePlan::Create(Parse(kDiamond), Lookup);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const EnsemblePlan& p = **plan;
  ASSERT_EQ(p.steps().size(), 3u);
  EXPECT_EQ(p.initial_steps(), std::vector<int>{0});
  EXPECT_EQ(p.steps()[0].dependency_count, 0);
  EXPECT_EQ(p.steps()[1].dependency_count, 1);
  EXPECT_EQ(p.steps()[2].dependency_count, 1);
  EXPECT_EQ(p.steps()[1].label, "step 2 (model 'classify')");
  // Both branches read what step 1 writes.
  const int preprocessed = p.steps()[0].outputs[0].second;
  EXPECT_EQ(p.tensor_name(preprocessed), "preprocessed");
  EXPECT_EQ(p.consumers(preprocessed), (std::vector<int>{1, 2}));
  ASSERT_EQ(p.outputs().size(), 2u);
  EXPECT_EQ(p.outputs()[0].first, "CLASSIFICATION");
  EXPECT_EQ(p.outputs()[0].second, p.steps()[1].outputs[0].second);
  ASSERT_EQ(p.inputs().size(), 1u);
  EXPECT_EQ(p.consumers(p.inputs()[0].second), std::vector<int>{0});
}

TEST(EnsemblePlanTest, StepsMayBeListedInAnyOrder) {
  // The reader comes before its writer in the config.
  auto plan = EnsemblePlan::Create(Parse(R"pb(
                                     name: "e"
                                     platform: "ensemble"
                                     max_batch_size: 8
                                     input {
                                       name: "IN"
                                       data_type: TYPE_STRING
                                       dims: [ 1 ]
                                     }
                                     output {
                                       name: "OUT"
                                       data_type: TYPE_FP32
                                       dims: [ 10 ]
                                     }
                                     ensemble_scheduling {
                                       step {
                                         model_name: "classify"
                                         input_map { key: "IMAGE" value: "img" }
                                         output_map { key: "SCORES" value: "OUT" }
                                       }
                                       step {
                                         model_name: "pre"
                                         input_map { key: "RAW" value: "IN" }
                                         output_map { key: "IMAGE" value: "img" }
                                       }
                                     })pb"),
                                   Lookup);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ((*plan)->initial_steps(), std::vector<int>{1});
  EXPECT_EQ((*plan)->steps()[0].dependency_count, 1);
}

TEST(EnsemblePlanTest, BrigadeStepFieldsAreCarried) {
  auto plan = EnsemblePlan::Create(Parse(R"pb(
                                     name: "e"
                                     platform: "ensemble"
                                     max_batch_size: 8
                                     input {
                                       name: "IN"
                                       data_type: TYPE_FP32
                                       dims: [ 3 ]
                                     }
                                     output {
                                       name: "OUT"
                                       data_type: TYPE_FP32
                                       dims: [ 3 ]
                                     }
                                     ensemble_scheduling {
                                       max_inflight_requests: 4
                                       step {
                                         model_name: "segment"
                                         model_version: 2
                                         input_map { key: "IMAGE" value: "IN" }
                                         output_map { key: "MASK" value: "OUT" }
                                         timeout_microseconds: 1500
                                         retries: 3
                                         fallback_model_name: "classify_missing"
                                       }
                                     })pb"),
                                   Lookup);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PlanStep& step = (*plan)->steps()[0];
  EXPECT_EQ(step.model_version, 2);
  EXPECT_EQ(step.timeout, absl::Microseconds(1500));
  EXPECT_EQ(step.retries, 3);
  // A fallback not loaded yet is allowed; it is looked up when it is needed.
  EXPECT_EQ(step.fallback_model_name, "classify_missing");
  EXPECT_EQ((*plan)->max_inflight_per_step(), 4);
  EXPECT_EQ((*plan)->step_queue_size(), 1024);
}

TEST(EnsemblePlanTest, UnknownModelsAndTensorsAreNamed) {
  EXPECT_EQ(CreateError(WithStep(kDiamond, R"pb(model_name: "nope"
                                                input_map { key: "X" value: "preprocessed" }
                                                output_map { key: "Y" value: "z" })pb")),
            "ensemble 'diamond': step 4 (model 'nope'): no model 'nope'");
  EXPECT_EQ(CreateError(WithStep(kDiamond, R"pb(model_name: "segment"
                                                input_map { key: "PIXELS" value: "preprocessed" }
                                                output_map { key: "MASK" value: "z" })pb")),
            "ensemble 'diamond': step 4 (model 'segment'): the model has no input 'PIXELS'");
  EXPECT_EQ(CreateError(WithStep(kDiamond, R"pb(model_name: "segment"
                                                input_map { key: "IMAGE" value: "preprocessed" }
                                                output_map { key: "MASKS" value: "z" })pb")),
            "ensemble 'diamond': step 4 (model 'segment'): the model has no output 'MASKS'");
  EXPECT_EQ(
      CreateError(WithStep(kDiamond, R"pb(model_name: "segment"
                                          input_map { key: "IMAGE" value: "nobody_writes_this" }
                                          output_map { key: "MASK" value: "z" })pb")),
      "ensemble 'diamond': step 4 (model 'segment') reads tensor 'nobody_writes_this', "
      "which is neither an ensemble input nor written by a step");
  EXPECT_EQ(CreateError(WithStep(kDiamond, R"pb(model_name: "merge"
                                                input_map { key: "A" value: "preprocessed" }
                                                output_map { key: "OUT" value: "z" })pb")),
            "ensemble 'diamond': step 4 (model 'merge'): input_map does not give the model's "
            "input 'B'");
}

TEST(EnsemblePlanTest, TensorsWrittenTwiceAreRefused) {
  EXPECT_EQ(
      CreateError(WithStep(kDiamond, R"pb(model_name: "segment"
                                          input_map { key: "IMAGE" value: "preprocessed" }
                                          output_map { key: "MASK" value: "SEGMENTATION" })pb")),
      "ensemble 'diamond': tensor 'SEGMENTATION' is written by step 4 (model 'segment') "
      "and also by step 3 (model 'segment')");
}

TEST(EnsemblePlanTest, CyclesAreRefusedNamingAStepOnThem) {
  const std::string message = CreateError(R"pb(
    name: "loop"
    platform: "ensemble"
    max_batch_size: 8
    input {
      name: "IN"
      data_type: TYPE_FP32
      dims: [ 3 ]
    }
    output {
      name: "OUT"
      data_type: TYPE_FP32
      dims: [ 3 ]
    }
    ensemble_scheduling {
      step {
        model_name: "merge"
        input_map { key: "A" value: "IN" }
        input_map { key: "B" value: "b" }
        output_map { key: "OUT" value: "a" }
      }
      step {
        model_name: "segment"
        input_map { key: "IMAGE" value: "a" }
        output_map { key: "MASK" value: "b" }
      }
      step {
        model_name: "segment"
        input_map { key: "IMAGE" value: "a" }
        output_map { key: "MASK" value: "OUT" }
      }
    })pb");
  EXPECT_NE(message.find("the steps form a cycle through step 1 (model 'merge')"),
            std::string::npos)
      << message;
}

TEST(EnsemblePlanTest, TypeAndShapeMismatchesBetweenStepsAreNamed) {
  // "pre" writes EXTRA as FP32 [-1,1]; "segment" wants FP32 [-1,3].
  EXPECT_EQ(CreateError(WithStep(R"pb(
                                   name: "e"
                                   platform: "ensemble"
                                   max_batch_size: 8
                                   input {
                                     name: "IN"
                                     data_type: TYPE_STRING
                                     dims: [ 1 ]
                                   }
                                   output {
                                     name: "OUT"
                                     data_type: TYPE_FP32
                                     dims: [ 3 ]
                                   }
                                   ensemble_scheduling {
                                     step {
                                       model_name: "pre"
                                       input_map { key: "RAW" value: "IN" }
                                       output_map { key: "EXTRA" value: "extra" }
                                     }
                                   })pb",
                                 R"pb(model_name: "segment"
                                      input_map { key: "IMAGE" value: "extra" }
                                      output_map { key: "MASK" value: "OUT" })pb")),
            "ensemble 'e': step 2 (model 'segment'): input 'IMAGE' has shape [-1,3] but tensor "
            "'extra' has shape [-1,1]");
  // The request's BYTES input read as FP32.
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              max_batch_size: 8
              input {
                name: "IN"
                data_type: TYPE_STRING
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              ensemble_scheduling {
                step {
                  model_name: "segment"
                  input_map { key: "IMAGE" value: "IN" }
                  output_map { key: "MASK" value: "OUT" }
                }
              })pb"),
            "ensemble 'e': step 1 (model 'segment'): input 'IMAGE' is FP32 but tensor 'IN' is "
            "BYTES");
  // An ensemble output declared other than what its step writes.
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              max_batch_size: 8
              input {
                name: "IN"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 4 ]
              }
              ensemble_scheduling {
                step {
                  model_name: "segment"
                  input_map { key: "IMAGE" value: "IN" }
                  output_map { key: "MASK" value: "OUT" }
                }
              })pb"),
            "ensemble 'e': output 'OUT' is declared FP32 [-1,4] but step 1 (model 'segment') "
            "writes FP32 [-1,3]");
}

TEST(EnsemblePlanTest, OutputsNoStepWritesAndBatchingMismatchesAreRefused) {
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              max_batch_size: 8
              input {
                name: "IN"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "LOST"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              ensemble_scheduling {
                step {
                  model_name: "segment"
                  input_map { key: "IMAGE" value: "IN" }
                  output_map { key: "MASK" value: "OUT" }
                }
              })pb"),
            "ensemble 'e': output 'LOST' is written by no step");
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              max_batch_size: 16
              input {
                name: "IN"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              ensemble_scheduling {
                step {
                  model_name: "segment"
                  input_map { key: "IMAGE" value: "IN" }
                  output_map { key: "MASK" value: "OUT" }
                }
              })pb"),
            "ensemble 'e': step 1 (model 'segment'): the model's max_batch_size 8 is below the "
            "ensemble's 16");
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              input {
                name: "IN"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              ensemble_scheduling {
                step {
                  model_name: "segment"
                  input_map { key: "IMAGE" value: "IN" }
                  output_map { key: "MASK" value: "OUT" }
                }
              })pb"),
            "ensemble 'e': step 1 (model 'segment'): the model batches, so the ensemble needs "
            "max_batch_size");
}

TEST(EnsemblePlanTest, BrigadeStepFieldsAreBounded) {
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              max_batch_size: 8
              input {
                name: "IN"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              ensemble_scheduling {
                step {
                  model_name: "segment"
                  input_map { key: "IMAGE" value: "IN" }
                  output_map { key: "MASK" value: "OUT" }
                  retries: 9
                }
              })pb"),
            "ensemble 'e': step 1 (model 'segment'): retries 9 exceeds 8");
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              max_batch_size: 8
              input {
                name: "IN"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              ensemble_scheduling {
                step {
                  model_name: "segment"
                  input_map { key: "IMAGE" value: "IN" }
                  output_map { key: "MASK" value: "OUT" }
                  fallback_model_name: "nobatch"
                }
              })pb"),
            "ensemble 'e': step 1 (model 'segment'): fallback model 'nobatch' has no output "
            "'MASK'");
  EXPECT_EQ(CreateError(R"pb(
              name: "e"
              platform: "ensemble"
              max_batch_size: 8
              input {
                name: "IN"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              output {
                name: "OUT"
                data_type: TYPE_FP32
                dims: [ 3 ]
              }
              ensemble_scheduling {})pb"),
            "ensemble 'e': ensemble_scheduling has no step");
}

}  // namespace
}  // namespace brigade::route
