#include "engine/process/process_backend.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string ReadTestImage(const std::string& name) {
  std::ifstream in(std::string(BRIGADE_PROCESS_TESTDATA_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The unit tests' reference pipeline (src/process/testdata): Resize(24) -> CenterCrop(20).
ModelLoadOptions Preprocess() {
  ModelLoadOptions options;
  options.model_name = "pre";
  options.max_batch_size = 4;
  options.parameters = {{"step", "image_classify_preprocess"}, {"size", "24"}, {"crop", "20"}};
  options.declared_inputs = {{"IMAGE", DataType::kBytes, {-1, 1}}};
  options.declared_outputs = {{"PIXELS", DataType::kFp32, {-1, 3, 20, 20}}};
  return options;
}

absl::StatusOr<std::vector<Tensor>> LoadAndExecute(const ModelLoadOptions& options,
                                                   std::vector<Tensor> inputs) {
  ProcessBackend backend;
  absl::StatusOr<std::shared_ptr<Model>> model = backend.Load(options);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::unique_ptr<ModelInstance>> instance = (*model)->CreateInstance({});
  if (!instance.ok()) return instance.status();
  std::vector<Tensor> outputs;
  absl::Status status = (*instance)->Execute(inputs, &outputs);
  if (!status.ok()) return status;
  return outputs;
}

TEST(ProcessBackendTest, PreprocessesABatchOfImagesToTorchvisionsTensor) {
  const std::vector<std::string> images = {ReadTestImage("rgb8.png"),
                                           ReadTestImage("baseline.jpg")};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(Preprocess(), {*Tensor::FromStrings({2, 1}, images)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const Tensor& pixels = (*out)[0];
  EXPECT_EQ(pixels.shape(), (Shape{2, 3, 20, 20}));
  const std::string want = ReadTestImage("baseline.jpg.r24c20.f32");
  ASSERT_EQ(want.size() * 2, pixels.byte_size());
  EXPECT_EQ(std::memcmp(pixels.data() + want.size(), want.data(), want.size()), 0);
}

TEST(ProcessBackendTest, ABadImageFailsNamingItsBatchIndex) {
  const std::string jpeg = ReadTestImage("baseline.jpg");
  const std::vector<std::string> images = {jpeg, jpeg.substr(0, jpeg.size() / 2), jpeg};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(Preprocess(), {*Tensor::FromStrings({3, 1}, images)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("model 'pre': input 'IMAGE' batch index 1: JPEG: corrupt or truncated"));
}

TEST(ProcessBackendTest, Uint8NhwcBgrOutputWithoutBatching) {
  ModelLoadOptions options = Preprocess();
  options.max_batch_size = 0;
  options.parameters["layout"] = "NHWC";
  options.parameters["order"] = "BGR";
  options.parameters["dtype"] = "UINT8";
  options.declared_inputs = {{"IMAGE", DataType::kBytes, {1}}};
  options.declared_outputs = {{"PIXELS", DataType::kUint8, {20, 20, 3}}};
  const std::vector<std::string> images = {ReadTestImage("rgba8.png")};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(options, {*Tensor::FromStrings({1}, images)});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& pixels = (*out)[0];
  EXPECT_EQ(pixels.shape(), (Shape{20, 20, 3}));
  const std::string rgb = ReadTestImage("rgba8.png.r24c20.rgb");
  const auto* got = reinterpret_cast<const uint8_t*>(pixels.data());
  for (size_t i = 0; i < rgb.size(); i += 3) {
    ASSERT_EQ(got[i], static_cast<uint8_t>(rgb[i + 2])) << i;
    ASSERT_EQ(got[i + 2], static_cast<uint8_t>(rgb[i])) << i;
  }
}

TEST(ProcessBackendTest, GrayOutputIsOneChannelAndKeepsAGreyImagesPixels) {
  ModelLoadOptions options = Preprocess();
  options.parameters["order"] = "GRAY";
  options.parameters["mean"] = "0";  // one value: every channel
  options.parameters["std"] = "1";
  options.declared_outputs = {{"PIXELS", DataType::kFp32, {-1, 1, 20, 20}}};
  const std::vector<std::string> images = {ReadTestImage("grey8.png")};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(options, {*Tensor::FromStrings({1, 1}, images)});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& pixels = (*out)[0];
  EXPECT_EQ(pixels.shape(), (Shape{1, 1, 20, 20}));
  // The reference is PIL's RGB resize of the grey image: R = G = B = the grey value.
  const std::string rgb = ReadTestImage("grey8.png.r24c20.rgb");
  const std::span<const float> got = pixels.values<float>();
  ASSERT_EQ(got.size() * 3, rgb.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], static_cast<float>(static_cast<uint8_t>(rgb[3 * i])) / 255.0f) << i;
  }

  options.declared_outputs = {{"PIXELS", DataType::kFp32, {-1, 3, 20, 20}}};
  ProcessBackend backend;
  EXPECT_THAT(backend.Load(options).status().message(),
              HasSubstr("expected FP32[1,20,20] (the crop in the configured layout)"));
}

TEST(ProcessBackendTest, ConfigMistakesAreRefusedByName) {
  ProcessBackend backend;
  auto message = [&](auto edit) {
    ModelLoadOptions options = Preprocess();
    edit(options);
    return std::string(backend.Load(options).status().message());
  };
  EXPECT_THAT(message([](auto& o) { o.parameters["step"] = "sharpen"; }),
              HasSubstr("parameter step is 'sharpen', expected image_classify_preprocess or"));
  EXPECT_THAT(message([](auto& o) { o.parameters["szie"] = "256"; }),
              HasSubstr("parameter 'szie' means nothing to step image_classify_preprocess"));
  EXPECT_THAT(message([](auto& o) { o.parameters["crop"] = "20,x"; }),
              HasSubstr("parameter crop is '20,x'"));
  EXPECT_THAT(message([](auto& o) { o.parameters["mean"] = "0.5,0.5"; }),
              HasSubstr("three comma-separated numbers"));
  EXPECT_THAT(message([](auto& o) { o.parameters["mode"] = "quick"; }),
              HasSubstr("expected exact or fast"));
  EXPECT_THAT(message([](auto& o) { o.parameters["dtype"] = "UINT8"; }),
              HasSubstr("expected FP32, the declared output's data_type"));
  EXPECT_THAT(message([](auto& o) {
                o.declared_outputs[0].shape = {-1, 3, 224, 224};
              }),
              HasSubstr("output 'PIXELS' is FP32[3,224,224], expected FP32[3,20,20]"));
  EXPECT_THAT(message([](auto& o) { o.declared_inputs[0].dtype = DataType::kUint8; }),
              HasSubstr("input 'IMAGE' is UINT8"));
  EXPECT_THAT(message([](auto& o) { o.parameters["size"] = "10"; }),
              HasSubstr("model 'pre': resize (the shorter side) must be 0 or at least"));
}

ModelLoadOptions Classify(std::string step, int k) {
  ModelLoadOptions options;
  options.model_name = "post";
  options.max_batch_size = 8;
  options.parameters = {{"step", step}};
  options.declared_inputs = {{"LOGITS", DataType::kFp32, {-1, 4}}};
  if (step == "top_k") {
    options.parameters["k"] = std::to_string(k);
    options.parameters["softmax"] = "true";
    options.declared_outputs = {{"SCORES", DataType::kFp32, {-1, k}},
                                {"CLASSES", DataType::kInt64, {-1, k}}};
  } else if (step == "argmax") {
    options.declared_outputs = {{"CLASS", DataType::kInt64, {-1, 1}}};
  } else {
    options.declared_outputs = {{"PROBS", DataType::kFp32, {-1, 4}}};
  }
  return options;
}

TEST(ProcessBackendTest, TopKWithSoftmaxAndArgmaxPerRow) {
  const std::vector<float> logits = {0, 2, 1, 0, 5, 0, 0, 6};
  const Tensor input = *Tensor::FromValues<float>({2, 4}, logits);
  absl::StatusOr<std::vector<Tensor>> top = LoadAndExecute(Classify("top_k", 2), {input});
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[1].shape(), (Shape{2, 2}));
  EXPECT_THAT((*top)[1].values<int64_t>(), ElementsAre(1, 2, 3, 0));
  const double z = 2 + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR((*top)[0].values<float>()[0], std::exp(2.0) / z, 1e-6);

  absl::StatusOr<std::vector<Tensor>> best = LoadAndExecute(Classify("argmax", 0), {input});
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_THAT((*best)[0].values<int64_t>(), ElementsAre(1, 3));

  absl::StatusOr<std::vector<Tensor>> probs = LoadAndExecute(Classify("softmax", 0), {input});
  ASSERT_TRUE(probs.ok()) << probs.status();
  EXPECT_NEAR((*probs)[0].values<float>()[1], std::exp(2.0) / z, 1e-6);
}

TEST(ProcessBackendTest, TopKLargerThanTheClassesIsRefused) {
  ProcessBackend backend;
  EXPECT_THAT(std::string(backend.Load(Classify("top_k", 5)).status().message()),
              HasSubstr("parameter k is '5', expected an integer in 1..4"));
  ModelLoadOptions options = Classify("softmax", 0);
  options.parameters["k"] = "2";
  EXPECT_THAT(std::string(backend.Load(options).status().message()),
              HasSubstr("parameter 'k' means nothing to step softmax"));
}

// A version directory in a fresh temporary directory, removed on destruction.
class VersionDir {
 public:
  VersionDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("process-step-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~VersionDir() { std::filesystem::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(ProcessBackendTest, TopKWithLabelsNamesTheClasses) {
  VersionDir dir;
  dir.Write("labels.txt", "cat\r\ndog\nbird\nfish\n");
  ModelLoadOptions options = Classify("top_k", 2);
  options.model_path = dir.path();
  options.parameters["labels"] = "labels.txt";
  options.declared_outputs.push_back({"NAMES", DataType::kBytes, {-1, 2}});
  const std::vector<float> logits = {0, 2, 1, 0, 5, 0, 0, 6};
  const Tensor input = *Tensor::FromValues<float>({2, 4}, logits);
  absl::StatusOr<std::vector<Tensor>> top = LoadAndExecute(options, {input});
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 3u);
  EXPECT_EQ((*top)[2].shape(), (Shape{2, 2}));
  EXPECT_THAT(*(*top)[2].StringValues(), ElementsAre("dog", "bird", "fish", "cat"));
}

TEST(ProcessBackendTest, LabelsFilesOutsideTheVersionDirectoryOrOfTheWrongLengthAreRefused) {
  VersionDir dir;
  dir.Write("three.txt", "a\nb\nc\n");
  ProcessBackend backend;
  auto message = [&](const std::string& labels) {
    ModelLoadOptions options = Classify("top_k", 2);
    options.model_path = dir.path();
    options.parameters["labels"] = labels;
    options.declared_outputs.push_back({"NAMES", DataType::kBytes, {-1, 2}});
    return std::string(backend.Load(options).status().message());
  };
  EXPECT_THAT(message("../three.txt"), HasSubstr("expected a file name in the version directory"));
  EXPECT_THAT(message("missing.txt"), HasSubstr("expected a regular file at"));
  EXPECT_THAT(message("three.txt"),
              HasSubstr("expected a file of 4 lines (one label per class), it has 3"));
  // Without the third output the labels parameter is a config mistake.
  ModelLoadOptions options = Classify("top_k", 2);
  options.model_path = dir.path();
  options.parameters["labels"] = "three.txt";
  EXPECT_THAT(std::string(backend.Load(options).status().message()),
              HasSubstr("takes 1 input(s) and 3 output(s)"));
}

// A version directory holding a vocab.txt, under the test's temporary directory.
class WordPieceStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("wordpiece_step_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "1");
    // ids: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4 hello=5 world=6 ,=7 Hello=8 ##s=9
    std::ofstream(dir_ / "1" / "vocab.txt")
        << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n,\n"
           "Hello\n##s\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ModelLoadOptions Options(int max_length = 6, int outputs = 3) const {
    ModelLoadOptions options;
    options.model_name = "tok";
    options.model_path = (dir_ / "1").string();
    options.max_batch_size = 4;
    options.parameters = {{"step", "wordpiece_tokenize"},
                          {"max_length", std::to_string(max_length)}};
    options.declared_inputs = {{"TEXT", DataType::kBytes, {-1, 1}}};
    const std::vector<std::string> names = {"input_ids", "attention_mask", "token_type_ids"};
    for (int i = 0; i < outputs; ++i) {
      options.declared_outputs.push_back({names[i], DataType::kInt64, {-1, max_length}});
    }
    return options;
  }

  std::string LoadError(const ModelLoadOptions& options) const {
    ProcessBackend backend;
    absl::StatusOr<std::shared_ptr<Model>> model = backend.Load(options);
    EXPECT_FALSE(model.ok());
    return std::string(model.status().message());
  }

  std::filesystem::path dir_;
};

TEST_F(WordPieceStepTest, TokenizesABatchOfSentencesToBertsThreeInputs) {
  const std::vector<std::string> texts = {"Hello, world", "worlds hello hello hello hello"};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(Options(), {*Tensor::FromStrings({2, 1}, texts)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6}));
  // Lower-cased by default; the second row is truncated to 4 pieces, keeping [SEP].
  EXPECT_THAT((*out)[0].values<int64_t>(), ElementsAre(2, 5, 7, 6, 3, 0, 2, 6, 9, 5, 5, 3));
  EXPECT_THAT((*out)[1].values<int64_t>(), ElementsAre(1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1));
  EXPECT_THAT((*out)[2].values<int64_t>(), ElementsAreArray(std::vector<int64_t>(12, 0)));
}

TEST_F(WordPieceStepTest, CasedTwoOutputsWithoutBatching) {
  ModelLoadOptions options = Options(5, 2);
  options.max_batch_size = 0;
  options.parameters["lower_case"] = "false";
  options.declared_inputs = {{"TEXT", DataType::kBytes, {1}}};
  for (TensorSpec& output : options.declared_outputs) output.shape = {5};
  const std::vector<std::string> texts = {"Hello hello"};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(options, {*Tensor::FromStrings({1}, texts)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].shape(), (Shape{5}));
  EXPECT_THAT((*out)[0].values<int64_t>(), ElementsAre(2, 8, 5, 3, 0));
  EXPECT_THAT((*out)[1].values<int64_t>(), ElementsAre(1, 1, 1, 1, 0));
}

TEST_F(WordPieceStepTest, InvalidUtf8FailsNamingItsBatchIndex) {
  const std::vector<std::string> texts = {"hello", "world", "bad \xC3\x28 text"};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(Options(), {*Tensor::FromStrings({3, 1}, texts)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("model 'tok': input 'TEXT' batch index 2: text is not valid UTF-8 at "
                        "byte 4"));
}

TEST_F(WordPieceStepTest, ConfigMistakesAreRefusedByName) {
  auto with = [&](auto edit) {
    ModelLoadOptions options = Options();
    edit(options);
    return LoadError(options);
  };
  EXPECT_THAT(with([](auto& o) { o.parameters["lower_case"] = "yes"; }),
              HasSubstr("parameter lower_case is 'yes', expected true or false"));
  EXPECT_THAT(with([](auto& o) { o.parameters["strip_accents"] = "1"; }),
              HasSubstr("parameter strip_accents is '1'"));
  EXPECT_THAT(with([](auto& o) { o.parameters["max_length"] = "1"; }),
              HasSubstr("parameter max_length is '1', expected an integer in 2..8192"));
  EXPECT_THAT(with([](auto& o) { o.parameters["max_length"] = "8193"; }),
              HasSubstr("parameter max_length is '8193'"));
  EXPECT_THAT(with([](auto& o) { o.parameters["vocabulary"] = "vocab.txt"; }),
              HasSubstr("parameter 'vocabulary' means nothing to step wordpiece_tokenize"));
  EXPECT_THAT(with([](auto& o) { o.parameters["vocab"] = "missing.txt"; }),
              HasSubstr("parameter vocab is 'missing.txt', expected a regular file"));
  EXPECT_THAT(with([](auto& o) { o.declared_outputs[1].dtype = DataType::kInt32; }),
              HasSubstr("output 'attention_mask' is INT32[6], expected INT64[6] (max_length)"));
  EXPECT_THAT(with([](auto& o) {
                o.declared_outputs[0].shape = {-1, 128};
              }),
              HasSubstr("output 'input_ids' is INT64[128], expected INT64[6]"));
  EXPECT_THAT(with([](auto& o) { o.declared_outputs.resize(1); }),
              HasSubstr("step wordpiece_tokenize takes 1 input(s) and 2 output(s)"));
  EXPECT_THAT(with([](auto& o) {
                o.declared_inputs[0].shape = {-1, 2};
              }),
              HasSubstr("input 'TEXT' is BYTES[2], expected BYTES[1]"));
  std::ofstream(dir_ / "1" / "nosep.txt") << "[PAD]\n[UNK]\n[CLS]\n";
  EXPECT_THAT(with([](auto& o) { o.parameters["vocab"] = "nosep.txt"; }),
              HasSubstr("model 'tok': vocabulary "));
  EXPECT_THAT(with([](auto& o) { o.parameters["vocab"] = "nosep.txt"; }),
              HasSubstr("has no [SEP] token"));
}

TEST_F(WordPieceStepTest, TheVocabularyIsNamedByAPlainFileNameOfTheVersionDirectory) {
  std::ofstream(dir_ / "outside.txt") << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n";
  std::filesystem::create_directories(dir_ / "1" / "sub");
  std::ofstream(dir_ / "1" / "sub" / "v.txt") << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n";
  std::filesystem::create_symlink(dir_ / "outside.txt", dir_ / "1" / "link.txt");
  std::ofstream(dir_ / "1" / "other.txt") << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n";
  auto vocab = [&](std::string name) {
    ModelLoadOptions options = Options();
    options.parameters["vocab"] = name;
    return options;
  };
  for (const std::string& name :
       {std::string("../outside.txt"), std::string("sub/v.txt"), (dir_ / "outside.txt").string(),
        std::string(".."), std::string("")}) {
    EXPECT_THAT(LoadError(vocab(name)),
                HasSubstr("expected a file name in the version directory, without a path"))
        << name;
  }
  EXPECT_THAT(LoadError(vocab("sub")), HasSubstr("expected a regular file at"));
  EXPECT_THAT(LoadError(vocab("missing.txt")), HasSubstr("expected a regular file at"));
  ProcessBackend backend;
  EXPECT_TRUE(backend.Load(vocab("other.txt")).ok());
  EXPECT_TRUE(backend.Load(vocab("link.txt")).ok()) << "a link in the directory is followed";
}

// SentencePiece: the unit tests' model (src/process/testdata/spm_test.model) as spm.model.
class SentencePieceStepTest : public WordPieceStepTest {
 protected:
  void SetUp() override {
    WordPieceStepTest::SetUp();
    std::filesystem::copy_file(std::string(BRIGADE_PROCESS_TESTDATA_DIR) + "/spm_test.model",
                               dir_ / "1" / "spm.model");
  }

  ModelLoadOptions SpmOptions(int max_length = 6) const {
    ModelLoadOptions options = Options(max_length, 2);
    options.parameters["step"] = "sentencepiece_tokenize";
    options.parameters["add_bos"] = "true";
    options.parameters["add_eos"] = "true";
    return options;
  }
};

TEST_F(SentencePieceStepTest, EncodesABatchWithBosAndEos) {
  // spm_sentences.ids: "This License applies..." is 198 32 10 36 36 ...; <s>=1 </s>=2 <pad>=3.
  const std::vector<std::string> texts = {"This License applies to any program.", ""};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(SpmOptions(), {*Tensor::FromStrings({2, 1}, texts)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6}));
  EXPECT_THAT((*out)[0].values<int64_t>(), ElementsAre(1, 198, 32, 10, 36, 2, 1, 2, 3, 3, 3, 3));
  EXPECT_THAT((*out)[1].values<int64_t>(), ElementsAre(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0));
}

TEST_F(SentencePieceStepTest, InvalidUtf8FailsNamingItsBatchIndex) {
  const std::vector<std::string> texts = {"fine", "\xFF"};
  absl::StatusOr<std::vector<Tensor>> out =
      LoadAndExecute(SpmOptions(), {*Tensor::FromStrings({2, 1}, texts)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("model 'tok': input 'TEXT' batch index 1: text is not valid UTF-8 at "
                        "byte 0"));
}

TEST_F(SentencePieceStepTest, ConfigMistakesAreRefusedByName) {
  auto with = [&](auto edit) {
    ModelLoadOptions options = SpmOptions();
    edit(options);
    return LoadError(options);
  };
  EXPECT_THAT(with([](auto& o) { o.parameters["add_bos"] = "maybe"; }),
              HasSubstr("parameter add_bos is 'maybe', expected true or false"));
  EXPECT_THAT(with([](auto& o) { o.parameters["lower_case"] = "true"; }),
              HasSubstr("parameter 'lower_case' means nothing to step sentencepiece_tokenize"));
  EXPECT_THAT(with([](auto& o) { o.parameters["model"] = "../spm.model"; }),
              HasSubstr("expected a file name in the version directory, without a path"));
  EXPECT_THAT(with([](auto& o) { o.parameters["model"] = "vocab.txt"; }),
              HasSubstr("model 'tok': cannot load the SentencePiece model"));
  EXPECT_THAT(with([](auto& o) {
                o.declared_outputs.push_back({"token_type_ids", DataType::kInt64, {-1, 6}});
              }),
              HasSubstr("step sentencepiece_tokenize takes 1 input(s) and 2 output(s)"));
  EXPECT_THAT(with([](auto& o) { o.parameters["max_length"] = "0"; }),
              HasSubstr("parameter max_length is '0'"));
}

}  // namespace
}  // namespace brigade::engine
