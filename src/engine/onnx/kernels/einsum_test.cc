// Einsum beyond the five ONNX node tests: the batched-matmul form (operands read through strides,
// gathered into scratch, the product scattered back) must equal a brute-force loop written here
// independently of the kernel, on the layouts transformer exports use and on the awkward ones
// (diagonals, letters only one operand has, broadcast "..." dims, transposed outputs); the
// loop-nest form on three operands and on fp64 likewise; and malformed equations must fail the
// plan with INVALID_ARGUMENT naming the node. Those are set on the loaded graph, since ONNX's
// shape inference would refuse some of them at load, and the kernel must not rely on it.

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// The reference: `equation` with letters only and an explicit output; a letter's size is the
// largest among its operands, and an operand whose dim is 1 there broadcasts it.
std::vector<double> BruteForceEinsum(const std::string& equation,
                                     const std::vector<const Tensor*>& operands) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms;
  std::string term;
  for (char c : equation.substr(0, arrow)) {
    if (c == ',') {
      terms.push_back(term);
      term.clear();
    } else {
      term.push_back(c);
    }
  }
  terms.push_back(term);
  const std::string out = equation.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t k = 0; k < terms.size(); ++k) {
    for (size_t d = 0; d < terms[k].size(); ++d) {
      size[terms[k][d]] = std::max(size[terms[k][d]], operands[k]->shape()[d]);
    }
  }
  std::vector<char> letters;
  letters.reserve(size.size());
  for (const auto& [letter, n] : size) letters.push_back(letter);
  int64_t out_count = 1;
  for (char c : out) out_count *= size[c];
  std::vector<double> result(static_cast<size_t>(out_count), 0.0);
  std::map<char, int64_t> at;
  for (char c : letters) at[c] = 0;
  while (true) {
    double product = 1;
    for (size_t k = 0; k < terms.size(); ++k) {
      int64_t offset = 0;
      for (size_t d = 0; d < terms[k].size(); ++d) {
        const int64_t dim = operands[k]->shape()[d];
        offset = offset * dim + (dim == 1 ? 0 : at[terms[k][d]]);
      }
      product *= operands[k]->values<float>()[static_cast<size_t>(offset)];
    }
    int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    result[static_cast<size_t>(o)] += product;
    size_t i = letters.size();
    while (i > 0) {
      --i;
      if (++at[letters[i]] < size[letters[i]]) break;
      at[letters[i]] = 0;
      if (i == 0) return result;
    }
    if (letters.empty()) return result;
  }
}

OnnxBuilder EinsumGraph(const std::string& equation, const std::vector<Shape>& shapes,
                        const std::vector<int64_t>& out_shape, DataType dtype = DataType::kFp32) {
  OnnxBuilder b;
  std::vector<std::string> names;
  for (size_t k = 0; k < shapes.size(); ++k) {
    names.push_back(StrCat("x", k));
    b.Input(names.back(), dtype, std::vector<int64_t>(shapes[k].begin(), shapes[k].end()));
  }
  OnnxBuilder::SetString(b.Node("Einsum", names, {"y"}), "equation", equation);
  b.Output("y", dtype, out_shape);
  return b;
}

struct Case {
  std::string equation;   // as the node has it
  std::string reference;  // letters only, explicit output (BruteForceEinsum's form)
  std::vector<Shape> shapes;
  std::vector<int64_t> out_shape;
};

void ExpectMatchesBruteForce(const Case& c, int threads) {
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < c.shapes.size(); ++k) {
    inputs.push_back(RandomTensor(std::vector<int64_t>(c.shapes[k].begin(), c.shapes[k].end()),
                                  static_cast<uint32_t>(7 + k)));
  }
  std::vector<const Tensor*> operands;
  operands.reserve(inputs.size());
  for (const Tensor& t : inputs) operands.push_back(&t);
  const std::vector<double> expected = BruteForceEinsum(c.reference, operands);
  const std::vector<Tensor> out =
      RunGraph(LoadGraph(EinsumGraph(c.equation, c.shapes, c.out_shape)), inputs, threads);
  ASSERT_EQ(out.size(), 1u) << c.equation;
  EXPECT_EQ(out[0].shape(), Shape(c.out_shape.begin(), c.out_shape.end())) << c.equation;
  ASSERT_EQ(static_cast<size_t>(out[0].num_elements()), expected.size()) << c.equation;
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::abs(out[0].values<float>()[i] - expected[i]));
  }
  EXPECT_LT(worst, 1e-4) << c.equation << " on " << threads << " thread(s)";
}

TEST(EinsumKernelTest, BatchedMatMulFormEqualsABruteForceLoop) {
  const std::vector<Case> cases = {
      // Attention scores and context, as transformer exports write them.
      {"bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", {{2, 3, 5, 8}, {2, 3, 6, 8}}, {2, 3, 5, 6}},
      {"bhqk,bhkd->bhqd", "bhqk,bhkd->bhqd", {{2, 3, 5, 6}, {2, 3, 6, 8}}, {2, 3, 5, 8}},
      // Heads not leading: strided batch dims, output permuted back.
      {"bqhd,bkhd->bhqk", "bqhd,bkhd->bhqk", {{2, 5, 3, 4}, {2, 6, 3, 4}}, {2, 3, 5, 6}},
      {"bhqk,bkhd->bqhd", "bhqk,bkhd->bqhd", {{2, 3, 5, 6}, {2, 6, 3, 4}}, {2, 5, 3, 4}},
      // A Linear on [batch, seq, hidden]; the implicit output sorts its letters: "bds".
      {"bsh,hd->bsd", "bsh,hd->bsd", {{2, 7, 16}, {16, 9}}, {2, 7, 9}},
      {"bsh,hd", "bsh,hd->bds", {{2, 7, 16}, {16, 9}}, {2, 9, 7}},
      // Transposed operands and output; M and N split over several letters.
      {"ji,kj->ik", "ji,kj->ik", {{6, 5}, {4, 6}}, {5, 4}},
      {"ij,jk->ki", "ij,jk->ki", {{5, 6}, {6, 4}}, {4, 5}},
      {"abk,kcd->acbd", "abk,kcd->acbd", {{2, 3, 4}, {4, 5, 2}}, {2, 5, 3, 2}},
      // Several K letters, not adjacent in the second operand.
      {"ikl,lmk->im", "ikl,lmk->im", {{3, 4, 5}, {5, 2, 4}}, {3, 2}},
      // Diagonal, a letter only one operand has (summed out first), outer and inner products.
      {"iij,jk->ik", "iij,jk->ik", {{4, 4, 5}, {5, 3}}, {4, 3}},
      {"ijx,jk->ik", "ijx,jk->ik", {{4, 5, 3}, {5, 3}}, {4, 3}},
      {"i,j->ij", "i,j->ij", {{5}, {7}}, {5, 7}},
      {"ij,ij->", "ij,ij->", {{5, 7}, {5, 7}}, {}},
      // Broadcast "..." dims.
      {"...ij,...jk->...ik", "xyij,yjk->xyik", {{2, 1, 3, 4}, {5, 4, 2}}, {2, 5, 3, 2}},
  };
  for (const Case& c : cases) {
    for (int threads : {1, 2}) ExpectMatchesBruteForce(c, threads);
  }
}

TEST(EinsumKernelTest, LoopNestFormEqualsABruteForceLoop) {
  const std::vector<Case> cases = {
      {"ij,jk,kl->il", "ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}, {3, 2}},
      {"ii->i", "ii->i", {{4, 4}}, {4}},
      {"ijk->kj", "ijk->kj", {{3, 4, 5}}, {5, 4}},
      {"ij", "ij->ij", {{3, 4}}, {3, 4}},
  };
  for (const Case& c : cases) ExpectMatchesBruteForce(c, 1);
}

TEST(EinsumKernelTest, Fp64RunsTheLoopNest) {
  OnnxBuilder b = EinsumGraph("ij,jk->ik", {{2, 3}, {3, 2}}, {2, 2}, DataType::kFp64);
  const std::vector<double> av{1, 2, 3, 4, 5, 6}, bv{1, 0, 0, 1, 1, 1};
  const std::vector<Tensor> inputs{*Tensor::FromValues<double>(Shape{2, 3}, av),
                                   *Tensor::FromValues<double>(Shape{3, 2}, bv)};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
  ASSERT_EQ(out.size(), 1u);
  const std::vector<double> got(out[0].values<double>().begin(), out[0].values<double>().end());
  EXPECT_EQ(got, (std::vector<double>{4, 5, 10, 11}));
}

TEST(EinsumKernelTest, MalformedEquationsFailThePlanNamingTheNode) {
  struct Bad {
    std::string equation;
    std::string says;
  };
  const std::vector<Bad> bad = {
      {"ij,j1->i", "'1', not a letter"},       {"ij,jk->i$", "'$', not a letter"},
      {"i.j,jk->ik", "outside an ellipsis"},   {"...ij...,jk->ik", "two ellipses"},
      {"ij,jk->iz", "'z' is in no operand"},   {"ij,jk->ii", "repeated"},
      {"ij->i", "operand terms for 2 inputs"}, {"ijk,jk->ik", "3 letters for an input of rank 2"},
      {"ij,kj->ik", "letter 'j' has size 4"},
  };
  for (const Bad& b : bad) {
    // Valid shapes for "ij,jk->ik" ([2, 3] × [3, 4]); the equation is swapped in afterwards.
    Graph graph = LoadGraph(EinsumGraph("ij,jk->ik", {{2, 3}, {3, 4}}, {2, 4}));
    for (Node& node : graph.nodes()) {
      if (node.op_type == "Einsum") node.attributes.SetString("equation", b.equation);
    }
    absl::Status status;
    auto compiled = CompiledModel::Compile("test", std::move(graph));
    if (!compiled.ok()) {
      status = compiled.status();
    } else {
      auto session = Session::Create(*compiled, Session::Options{});
      if (!session.ok()) {
        status = session.status();
      } else {
        const std::vector<Tensor> inputs{RandomTensor({2, 3}, 1), RandomTensor({3, 4}, 2)};
        std::vector<Tensor> outputs;
        status = (*session)->Run(inputs, &outputs);
      }
    }
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << b.equation << ": " << status;
    EXPECT_NE(status.message().find("node 'Einsum_0' (Einsum)"), std::string::npos)
        << b.equation << ": " << status;
    EXPECT_NE(status.message().find(b.says), std::string::npos) << b.equation << ": " << status;
  }
}

}  // namespace
}  // namespace brigade::engine::onnx
