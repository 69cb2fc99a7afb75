// LSTM, GRU and RNN against a reference written from the ONNX operators' equations (one hidden
// unit at a time, in double), on what the ONNX node tests leave out: both directions with
// sequence_lens, layout 1, clip, peepholes with input_forget, GRU with and without
// linear_before_reset, activations with alpha / beta, weights given at run time, and two
// threads (the directions then run side by side). Then bad attributes and shapes: each must be
// refused with INVALID_ARGUMENT naming the node and the field.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

struct Case {
  std::string op = "LSTM";
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 5, batch = 3, input = 4, hidden = 6;
  bool bias = true, lens = false, init_h = false, init_c = false, peephole = false;
  bool runtime_weights = false;  // W, R, B as graph inputs instead of initializers
  bool hidden_size_attr = true;  // false: the kernel takes hidden_size from R's shape
  float clip = 0;
  int64_t input_forget = 0, lbr = 0;
  std::vector<std::string> acts;
  std::vector<float> alphas, betas;
  std::vector<int32_t> lengths;  // with `lens`
  int threads = 1;
};

std::string Describe(const Case& c) {
  std::string s = c.op + "/" + c.direction + "/layout" + std::to_string(c.layout);
  if (c.lens) s += "/lens";
  if (c.clip > 0) s += "/clip";
  if (c.peephole) s += "/peephole";
  if (c.input_forget) s += "/input_forget";
  if (c.lbr) s += "/lbr";
  if (!c.acts.empty()) s += "/" + c.acts[0];
  if (c.runtime_weights) s += "/runtime";
  return s + "/threads" + std::to_string(c.threads);
}

int64_t Gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
int64_t Dirs(const Case& c) { return c.direction == "bidirectional" ? 2 : 1; }

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

double Apply(const Act& a, double x) {
  if (a.name == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (a.name == "Tanh") return std::tanh(x);
  if (a.name == "Relu") return std::max(x, 0.0);
  if (a.name == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
  if (a.name == "HardSigmoid") return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
  if (a.name == "ScaledTanh") return a.alpha * std::tanh(a.beta * x);
  if (a.name == "Affine") return a.alpha * x + a.beta;
  if (a.name == "Elu") return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
  if (a.name == "Softsign") return x / (1 + std::abs(x));
  if (a.name == "Softplus") return std::log1p(std::exp(x));
  if (a.name == "ThresholdedRelu") return x > a.alpha ? x : 0;
  ADD_FAILURE() << "no reference for " << a.name;
  return 0;
}

// The activations of direction d (f, g, h as the op has them).
std::vector<Act> Activations(const Case& c, int64_t d) {
  const size_t per = c.op == "LSTM" ? 3 : c.op == "GRU" ? 2 : 1;
  std::vector<std::string> names = c.acts;
  if (names.empty()) {
    names = c.op == "LSTM"  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
            : c.op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                            : std::vector<std::string>{"Tanh"};
  }
  std::vector<Act> all;
  size_t ai = 0, bi = 0;
  for (const std::string& n : names) {
    Act a{n};
    const bool takes_alpha = n == "LeakyRelu" || n == "HardSigmoid" || n == "ScaledTanh" ||
                             n == "Affine" || n == "Elu" || n == "ThresholdedRelu";
    const bool takes_beta = n == "HardSigmoid" || n == "ScaledTanh" || n == "Affine";
    if (takes_alpha) a.alpha = ai < c.alphas.size() ? c.alphas[ai++] : 0.01;
    if (takes_beta) a.beta = bi < c.betas.size() ? c.betas[bi++] : 0.5;
    all.push_back(a);
  }
  if (all.size() == per) return all;
  return {all.begin() + static_cast<int64_t>(d * per),
          all.begin() + static_cast<int64_t>((d + 1) * per)};
}

struct Inputs {
  Tensor x, w, r, b, lens, h0, c0, p;
};

Inputs MakeInputs(const Case& c) {
  const int64_t dirs = Dirs(c), g = Gates(c.op), n = c.hidden;
  Inputs in;
  in.x = c.layout == 0 ? RandomTensor({c.seq, c.batch, c.input}, 1)
                       : RandomTensor({c.batch, c.seq, c.input}, 1);
  in.w = RandomTensor({dirs, g * n, c.input}, 2);
  in.r = RandomTensor({dirs, g * n, n}, 3);
  in.b = RandomTensor({dirs, 2 * g * n}, 4);
  std::vector<int32_t> lengths = c.lengths;
  lengths.resize(static_cast<size_t>(c.batch), static_cast<int32_t>(c.seq));
  in.lens = *Tensor::FromValues<int32_t>(Shape{c.batch}, lengths);
  const std::vector<int64_t> state = c.layout == 0 ? std::vector<int64_t>{dirs, c.batch, n}
                                                   : std::vector<int64_t>{c.batch, dirs, n};
  in.h0 = RandomTensor(state, 5);
  in.c0 = RandomTensor(state, 6);
  in.p = RandomTensor({dirs, 3 * n}, 7);
  return in;
}

// Y, Y_h (and Y_c) from the ONNX equations, in the node's layout.
std::vector<std::vector<double>> Reference(const Case& c, const Inputs& in) {
  const int64_t dirs = Dirs(c), g = Gates(c.op), n = c.hidden, seq = c.seq, batch = c.batch;
  const auto x = in.x.values<float>();
  const auto w = in.w.values<float>();
  const auto r = in.r.values<float>();
  const auto bv = in.b.values<float>();
  const auto lens = in.lens.values<int32_t>();
  auto xi = [&](int64_t t, int64_t b, int64_t k) {
    return c.layout == 0 ? x[(t * batch + b) * c.input + k] : x[(b * seq + t) * c.input + k];
  };
  auto state_index = [&](int64_t d, int64_t b, int64_t j) {
    return c.layout == 0 ? (d * batch + b) * n + j : (b * dirs + d) * n + j;
  };
  auto y_index = [&](int64_t t, int64_t d, int64_t b, int64_t j) {
    return c.layout == 0 ? ((t * dirs + d) * batch + b) * n + j
                         : ((b * seq + t) * dirs + d) * n + j;
  };
  std::vector<double> y(static_cast<size_t>(seq * dirs * batch * n), 0.0);
  std::vector<double> yh(static_cast<size_t>(dirs * batch * n)), yc(yh.size());
  auto clip = [&](double v) {
    return c.clip > 0 ? std::clamp(v, -double{c.clip}, double{c.clip}) : v;
  };
  for (int64_t d = 0; d < dirs; ++d) {
    const std::vector<Act> act = Activations(c, d);
    const bool reverse = c.direction == "reverse" || d == 1;
    // x·W_kᵀ + Wb_k for gate k, unit j; h·R_kᵀ + Rb_k.
    auto wx = [&](int64_t t, int64_t b, int64_t k, int64_t j) {
      double s = c.bias ? bv[d * 2 * g * n + k * n + j] : 0.0;
      for (int64_t i = 0; i < c.input; ++i) {
        s += xi(t, b, i) * w[(d * g * n + k * n + j) * c.input + i];
      }
      return s;
    };
    auto rh = [&](const std::vector<double>& h, int64_t k, int64_t j) {
      double s = c.bias ? bv[d * 2 * g * n + g * n + k * n + j] : 0.0;
      for (int64_t i = 0; i < n; ++i) {
        s += h[static_cast<size_t>(i)] * r[(d * g * n + k * n + j) * n + i];
      }
      return s;
    };
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> h(static_cast<size_t>(n), 0.0), cs(static_cast<size_t>(n), 0.0);
      for (int64_t j = 0; j < n; ++j) {
        if (c.init_h) h[static_cast<size_t>(j)] = in.h0.values<float>()[state_index(d, b, j)];
        if (c.init_c) cs[static_cast<size_t>(j)] = in.c0.values<float>()[state_index(d, b, j)];
      }
      const int64_t len = c.lens ? lens[b] : seq;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = reverse ? len - 1 - s : s;
        std::vector<double> nh(static_cast<size_t>(n)), nc(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) {
          const size_t uj = static_cast<size_t>(j);
          if (c.op == "LSTM") {
            auto pp = [&](int64_t k) {
              return c.peephole ? in.p.values<float>()[d * 3 * n + k * n + j] : 0.0;
            };
            const double i = Apply(act[0], clip(wx(t, b, 0, j) + rh(h, 0, j) + pp(0) * cs[uj]));
            const double f =
                c.input_forget ? 1 - i
                               : Apply(act[0], clip(wx(t, b, 2, j) + rh(h, 2, j) + pp(2) * cs[uj]));
            const double cc = Apply(act[1], clip(wx(t, b, 3, j) + rh(h, 3, j)));
            nc[uj] = f * cs[uj] + i * cc;
            const double o = Apply(act[0], clip(wx(t, b, 1, j) + rh(h, 1, j) + pp(1) * nc[uj]));
            nh[uj] = o * Apply(act[2], nc[uj]);
          } else if (c.op == "GRU") {
            const double z = Apply(act[0], clip(wx(t, b, 0, j) + rh(h, 0, j)));
            const double rr_j = Apply(act[0], clip(wx(t, b, 1, j) + rh(h, 1, j)));
            double pre = wx(t, b, 2, j);
            if (c.lbr) {
              pre += rr_j * rh(h, 2, j);
            } else {
              // (r ⊙ h)·Rhᵀ needs every unit's r.
              std::vector<double> rhv(static_cast<size_t>(n));
              for (int64_t q = 0; q < n; ++q) {
                rhv[static_cast<size_t>(q)] =
                    Apply(act[0], clip(wx(t, b, 1, q) + rh(h, 1, q))) * h[static_cast<size_t>(q)];
              }
              pre += rh(rhv, 2, j);
            }
            const double hh = Apply(act[1], clip(pre));
            nh[uj] = (1 - z) * hh + z * h[uj];
          } else {
            nh[uj] = Apply(act[0], clip(wx(t, b, 0, j) + rh(h, 0, j)));
          }
        }
        h = nh;
        if (c.op == "LSTM") cs = nc;
        for (int64_t j = 0; j < n; ++j) {
          y[static_cast<size_t>(y_index(t, d, b, j))] = h[static_cast<size_t>(j)];
        }
      }
      // A row of length 0 answers zeros, as ONNX Runtime does (the kernel's contract).
      for (int64_t j = 0; j < n; ++j) {
        yh[static_cast<size_t>(state_index(d, b, j))] = len == 0 ? 0 : h[static_cast<size_t>(j)];
        yc[static_cast<size_t>(state_index(d, b, j))] = len == 0 ? 0 : cs[static_cast<size_t>(j)];
      }
    }
  }
  if (c.op == "LSTM") return {y, yh, yc};
  return {y, yh};
}

OnnxBuilder Build(const Case& c, const Inputs& in) {
  const int64_t dirs = Dirs(c), n = c.hidden;
  OnnxBuilder b(14);
  b.Input("x", DataType::kFp32,
          c.layout == 0 ? std::vector<int64_t>{c.seq, c.batch, c.input}
                        : std::vector<int64_t>{c.batch, c.seq, c.input});
  auto weight = [&](const std::string& name, const Tensor& t) {
    if (c.runtime_weights) {
      b.Input(name, DataType::kFp32, std::vector<int64_t>(t.shape().begin(), t.shape().end()));
    } else {
      b.Initializer(name, t);
    }
  };
  weight("w", in.w);
  weight("r", in.r);
  std::vector<std::string> inputs{"x", "w", "r", ""};
  if (c.bias) {
    weight("b", in.b);
    inputs[3] = "b";
  }
  const std::vector<int64_t> state = c.layout == 0 ? std::vector<int64_t>{dirs, c.batch, n}
                                                   : std::vector<int64_t>{c.batch, dirs, n};
  inputs.emplace_back(c.lens ? "lens" : "");
  if (c.lens) b.Input("lens", DataType::kInt32, {c.batch});
  inputs.emplace_back(c.init_h ? "h0" : "");
  if (c.init_h) b.Input("h0", DataType::kFp32, state);
  if (c.op == "LSTM") {
    inputs.emplace_back(c.init_c ? "c0" : "");
    if (c.init_c) b.Input("c0", DataType::kFp32, state);
    inputs.emplace_back(c.peephole ? "p" : "");
    if (c.peephole) b.Initializer("p", in.p);
  }
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  std::vector<std::string> outputs{"y", "yh"};
  if (c.op == "LSTM") outputs.emplace_back("yc");
  auto& node = b.Node(c.op, inputs, outputs);
  node.set_name("rnn");
  if (c.hidden_size_attr) OnnxBuilder::SetInt(node, "hidden_size", n);
  OnnxBuilder::SetString(node, "direction", c.direction);
  if (c.layout != 0) OnnxBuilder::SetInt(node, "layout", c.layout);
  if (c.clip > 0) OnnxBuilder::SetFloat(node, "clip", c.clip);
  if (c.input_forget) OnnxBuilder::SetInt(node, "input_forget", 1);
  if (c.lbr) OnnxBuilder::SetInt(node, "linear_before_reset", 1);
  if (!c.acts.empty()) {
    auto* attr = node.add_attribute();
    attr->set_name("activations");
    attr->set_type(::onnx::AttributeProto::STRINGS);
    for (const std::string& a : c.acts) attr->add_strings(a);
  }
  auto floats = [&](const std::string& name, const std::vector<float>& values) {
    if (values.empty()) return;
    auto* attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(::onnx::AttributeProto::FLOATS);
    for (float v : values) attr->add_floats(v);
  };
  floats("activation_alpha", c.alphas);
  floats("activation_beta", c.betas);
  b.Output("y", DataType::kFp32,
           c.layout == 0 ? std::vector<int64_t>{c.seq, dirs, c.batch, n}
                         : std::vector<int64_t>{c.batch, c.seq, dirs, n});
  b.Output("yh", DataType::kFp32, state);
  if (c.op == "LSTM") b.Output("yc", DataType::kFp32, state);
  return b;
}

std::vector<Tensor> GraphInputs(const Case& c, const Inputs& in) {
  std::vector<Tensor> v{in.x};
  if (c.runtime_weights) {
    v.push_back(in.w);
    v.push_back(in.r);
    if (c.bias) v.push_back(in.b);
  }
  if (c.lens) v.push_back(in.lens);
  if (c.init_h) v.push_back(in.h0);
  if (c.op == "LSTM" && c.init_c) v.push_back(in.c0);
  return v;
}

void ExpectMatchesReference(const Case& c) {
  SCOPED_TRACE(Describe(c));
  const Inputs in = MakeInputs(c);
  const std::vector<Tensor> got = RunGraph(LoadGraph(Build(c, in)), GraphInputs(c, in), c.threads);
  const std::vector<std::vector<double>> want = Reference(c, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const auto values = got[k].values<float>();
    ASSERT_EQ(values.size(), want[k].size()) << "output " << k;
    double worst = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      worst = std::max(worst, std::abs(values[i] - want[k][i]));
    }
    EXPECT_LT(worst, 2e-5) << "output " << k;
  }
}

TEST(RnnKernelTest, BidirectionalWithSequenceLengthsZeroesThePaddingAndKeepsTheLastValidState) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (int threads : {1, 2}) {
      Case c;
      c.op = op;
      c.direction = "bidirectional";
      c.lens = true;
      c.init_h = c.init_c = true;
      c.lengths = {5, 2, 0};  // full, shorter, empty (Y_h = 0)
      c.threads = threads;
      ExpectMatchesReference(c);
      c.layout = 1;
      ExpectMatchesReference(c);
    }
  }
}

TEST(RnnKernelTest, ReverseAndLayoutOneFollowTheEquations) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    Case c;
    c.op = op;
    c.direction = "reverse";
    c.layout = 1;
    c.init_h = true;
    ExpectMatchesReference(c);
    c.lens = true;
    c.lengths = {3, 5, 1};
    ExpectMatchesReference(c);
  }
}

TEST(RnnKernelTest, ClipBoundsEveryGatePreActivation) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    Case c;
    c.op = op;
    c.clip = 0.3f;
    c.direction = "bidirectional";
    ExpectMatchesReference(c);
  }
}

TEST(RnnKernelTest, PeepholesAndInputForget) {
  Case c;
  c.peephole = true;
  c.init_c = true;
  ExpectMatchesReference(c);
  c.input_forget = 1;
  ExpectMatchesReference(c);
}

TEST(RnnKernelTest, GruWithAndWithoutLinearBeforeReset) {
  for (int64_t lbr : {0, 1}) {
    Case c;
    c.op = "GRU";
    c.lbr = lbr;
    c.direction = "bidirectional";
    c.init_h = true;
    ExpectMatchesReference(c);
  }
}

TEST(RnnKernelTest, ActivationsTakeTheirAlphaAndBetaInOrder) {
  Case lstm;
  lstm.acts = {"HardSigmoid", "ScaledTanh", "LeakyRelu"};
  lstm.alphas = {0.3f, 0.9f, 0.05f};
  lstm.betas = {0.4f, 1.2f};
  ExpectMatchesReference(lstm);
  Case gru;
  gru.op = "GRU";
  gru.direction = "bidirectional";
  gru.acts = {"Sigmoid", "Softsign", "HardSigmoid", "Elu"};
  gru.alphas = {0.25f, 0.7f};
  gru.betas = {0.45f};
  ExpectMatchesReference(gru);
  Case rnn;
  rnn.op = "RNN";
  for (const char* act : {"Relu", "Affine", "Softplus", "ThresholdedRelu"}) {
    rnn.acts = {act};
    rnn.alphas = {0.5f};
    rnn.betas = {0.1f};
    ExpectMatchesReference(rnn);
  }
}

TEST(RnnKernelTest, WeightsGivenAtRunTime) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    Case c;
    c.op = op;
    c.runtime_weights = true;
    c.direction = "bidirectional";
    c.lbr = 0;
    ExpectMatchesReference(c);
    if (c.op == "GRU") {
      c.lbr = 1;
      ExpectMatchesReference(c);
    }
  }
}

TEST(RnnKernelTest, HiddenSizeDefaultsToRsShape) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    Case c;
    c.op = op;
    c.hidden_size_attr = false;
    c.direction = "bidirectional";
    ExpectMatchesReference(c);
  }
}

TEST(RnnKernelTest, LargerShapesOnTwoThreads) {
  Case c;
  c.seq = 9;
  c.batch = 8;
  c.input = 40;
  c.hidden = 37;  // not a multiple of any vector width
  c.direction = "bidirectional";
  c.threads = 2;
  ExpectMatchesReference(c);
  c.op = "GRU";
  c.lbr = 1;
  ExpectMatchesReference(c);
}

// The status of compiling and running `builder`'s model once on `inputs`.
absl::Status RunStatus(const OnnxBuilder& builder, const std::vector<Tensor>& inputs) {
  auto loaded = LoadOnnxBytes(builder.Serialize(), "");
  if (!loaded.ok()) return loaded.status();
  auto compiled = CompiledModel::Compile("test", std::move(loaded->graph));
  if (!compiled.ok()) return compiled.status();
  auto session = Session::Create(*compiled, Session::Options{});
  if (!session.ok()) return session.status();
  std::vector<Tensor> outputs;
  return (*session)->Run(inputs, &outputs);
}

// A forward LSTM over x [2, 1, 3] with hidden 4 whose node `edit` changes; W/R given at run time
// so that the shapes reach the kernel unchecked by ONNX's shape inference.
absl::Status LstmStatus(void (*edit)(::onnx::NodeProto&), const std::vector<int64_t>& w_shape,
                        const std::vector<int64_t>& r_shape) {
  OnnxBuilder b(14);
  b.Input("x", DataType::kFp32, {2, 1, 3});
  b.Input("w", DataType::kFp32, w_shape);
  b.Input("r", DataType::kFp32, r_shape);
  auto& node = b.Node("LSTM", {"x", "w", "r"}, {"y"});
  node.set_name("lstm0");
  OnnxBuilder::SetInt(node, "hidden_size", 4);
  edit(node);
  b.Output("y", DataType::kFp32, {-1, -1, -1, -1});
  std::vector<Tensor> inputs{RandomTensor({2, 1, 3}, 1), RandomTensor(w_shape, 2),
                             RandomTensor(r_shape, 3)};
  return RunStatus(b, inputs);
}

void ExpectRefused(const absl::Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("'lstm0'"), std::string::npos) << status;
  EXPECT_NE(status.message().find(field), std::string::npos) << status;
}

TEST(RnnKernelTest, BadAttributesAndShapesAreRefusedNamingTheField) {
  auto none = [](::onnx::NodeProto&) {};
  EXPECT_TRUE(LstmStatus(none, {1, 16, 3}, {1, 16, 4}).ok());
  // hidden_size 4, but W and R are laid out for 5.
  ExpectRefused(LstmStatus(none, {1, 20, 3}, {1, 20, 5}), "hidden_size");
  ExpectRefused(LstmStatus(none, {1, 20, 3}, {1, 16, 4}), "hidden_size");
  ExpectRefused(
      LstmStatus([](::onnx::NodeProto& n) { n.mutable_attribute(0)->set_i(int64_t{1} << 40); },
                 {1, 16, 3}, {1, 16, 4}),
      "hidden_size");
  ExpectRefused(LstmStatus([](::onnx::NodeProto& n) { n.mutable_attribute(0)->set_i(0); },
                           {1, 16, 3}, {1, 16, 4}),
                "hidden_size");
  ExpectRefused(LstmStatus(none, {1, 16, 2}, {1, 16, 4}), "W");
  ExpectRefused(LstmStatus(none, {2, 16, 3}, {2, 16, 4}), "W");  // two directions, forward
  ExpectRefused(
      LstmStatus([](::onnx::NodeProto& n) { OnnxBuilder::SetString(n, "direction", "sideways"); },
                 {1, 16, 3}, {1, 16, 4}),
      "direction");
  ExpectRefused(LstmStatus([](::onnx::NodeProto& n) { OnnxBuilder::SetFloat(n, "clip", -1.0f); },
                           {1, 16, 3}, {1, 16, 4}),
                "clip");
  ExpectRefused(LstmStatus([](::onnx::NodeProto& n) { OnnxBuilder::SetInt(n, "layout", 2); },
                           {1, 16, 3}, {1, 16, 4}),
                "layout");
  ExpectRefused(LstmStatus([](::onnx::NodeProto& n) { OnnxBuilder::SetInt(n, "input_forget", 3); },
                           {1, 16, 3}, {1, 16, 4}),
                "input_forget");
  ExpectRefused(LstmStatus(
                    [](::onnx::NodeProto& n) {
                      auto* attr = n.add_attribute();
                      attr->set_name("activations");
                      attr->set_type(::onnx::AttributeProto::STRINGS);
                      attr->add_strings("Sigmoid");
                      attr->add_strings("Tanh");
                      attr->add_strings("Cosine");
                    },
                    {1, 16, 3}, {1, 16, 4}),
                "activations");
  ExpectRefused(LstmStatus(
                    [](::onnx::NodeProto& n) {
                      auto* attr = n.add_attribute();
                      attr->set_name("activations");
                      attr->set_type(::onnx::AttributeProto::STRINGS);
                      attr->add_strings("Sigmoid");
                    },
                    {1, 16, 3}, {1, 16, 4}),
                "activations");
}

TEST(RnnKernelTest, SequenceLengthOutsideTheSequenceFailsTheRun) {
  Case c;
  c.lens = true;
  c.lengths = {5, 6, 1};  // 6 > seq 5
  const Inputs in = MakeInputs(c);
  const absl::Status status = RunStatus(Build(c, in), GraphInputs(c, in));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("sequence_lens"), std::string::npos) << status;
}

}  // namespace
}  // namespace brigade::engine::onnx
