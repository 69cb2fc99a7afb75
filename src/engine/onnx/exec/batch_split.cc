#include "engine/onnx/exec/batch_split.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/strings.h"

namespace brigade::engine::onnx {
namespace {

// Output row i reads row i of input 0 and nothing batched else; other inputs are weights.
const absl::flat_hash_set<std::string_view>& RowWiseOps() {
  static const auto* ops = new absl::flat_hash_set<std::string_view>{"Conv",
                                                                     "ConvTranspose",
                                                                     "MaxPool",
                                                                     "AveragePool",
                                                                     "GlobalAveragePool",
                                                                     "GlobalMaxPool",
                                                                     "BatchNormalization",
                                                                     "InstanceNormalization",
                                                                     "Relu",
                                                                     "LeakyRelu",
                                                                     "Clip",
                                                                     "Sigmoid",
                                                                     "HardSigmoid",
                                                                     "HardSwish",
                                                                     "Tanh",
                                                                     "Erf",
                                                                     "Exp",
                                                                     "Log",
                                                                     "Neg",
                                                                     "Abs",
                                                                     "Reciprocal",
                                                                     "Sqrt",
                                                                     "Identity",
                                                                     "Cast",
                                                                     "Softplus",
                                                                     "Elu",
                                                                     "Selu",
                                                                     "Floor",
                                                                     "Ceil",
                                                                     "Round",
                                                                     "Sign",
                                                                     "Not"};
  return *ops;
}

// Element-wise with broadcasting: every batched operand spans the output's rank.
const absl::flat_hash_set<std::string_view>& BroadcastOps() {
  static const auto* ops = new absl::flat_hash_set<std::string_view>{
      "Add",  "Sub",   "Mul",  "Div",     "Pow",   "PRelu", "Max", "Min", "Sum",
      "Mean", "Equal", "Less", "Greater", "Where", "And",   "Or",  "Xor", "Mod"};
  return *ops;
}

class RowChecker {
 public:
  explicit RowChecker(const Graph& graph) : graph_(graph), batched_(graph.num_values(), false) {}

  bool Check() {
    for (ValueId input : graph_.inputs()) {
      const Value& v = graph_.value(input);
      if (!v.shape.has_value() || v.shape->empty() || (*v.shape)[0] >= 0) return false;
      batched_[static_cast<size_t>(input)] = true;
    }
    for (const Node& node : graph_.nodes()) {
      if (node.removed) continue;
      if (!NodeKeepsRows(node)) return false;
      for (ValueId output : node.outputs) {
        if (output != kNoValue) batched_[static_cast<size_t>(output)] = true;
      }
    }
    for (ValueId output : graph_.outputs()) {
      if (!batched_[static_cast<size_t>(output)] || Rank(output) < 1) return false;
    }
    return true;
  }

 private:
  bool Batched(ValueId id) const { return id != kNoValue && batched_[static_cast<size_t>(id)]; }

  // -1 when unknown.
  int Rank(ValueId id) const {
    const Value& v = graph_.value(id);
    return v.shape.has_value() ? static_cast<int>(v.shape->size()) : -1;
  }

  // A non-batched operand that broadcasts to an output of rank `rank` without spanning its rows.
  bool BroadcastsAlongRows(ValueId id, int rank) const {
    if (id == kNoValue) return true;
    if (Batched(id)) return false;
    const Value& v = graph_.value(id);
    if (!v.shape.has_value()) return false;
    return static_cast<int>(v.shape->size()) < rank || (*v.shape)[0] == 1;
  }

  // Batched with the output's rank, or a non-batched operand that broadcasts along the rows.
  bool RowAligned(ValueId id, int rank) const {
    if (id == kNoValue) return true;
    return Batched(id) ? Rank(id) == rank : BroadcastsAlongRows(id, rank);
  }

  // `axis` normalized against `rank` is not the row axis.
  static bool AxisAfterRows(int64_t axis, int rank) {
    if (axis < 0) {
      if (rank < 0) return false;
      axis += rank;
    }
    return axis >= 1;
  }

  bool OnlyFirstOutput(const Node& node) const {
    for (size_t k = 1; k < node.outputs.size(); ++k) {
      if (node.outputs[k] != kNoValue) return false;
    }
    return !node.outputs.empty() && node.outputs[0] != kNoValue;
  }

  // Fused ops: (X, W, [B], post-op inputs...). Weights are not batched; post-op operands (the
  // residual, a bias) are row-aligned with the output.
  bool FusedKeepsRows(const Node& node) const {
    if (!Batched(node.input(0)) || Batched(node.input(1)) || !OnlyFirstOutput(node)) return false;
    const int rank = Rank(node.outputs[0]);
    if (rank < 1) return false;
    for (size_t k = 2; k < node.inputs.size(); ++k) {
      if (!RowAligned(node.inputs[k], rank)) return false;
    }
    return true;
  }

  bool MatMulKeepsRows(const Node& node) const {
    // A's rows are the output's rows only when A is not transposed and has rows at all; B's
    // leading dimensions must not broadcast against A's batch.
    if (node.attributes.GetInt("transA", 0) != 0 || Rank(node.input(0)) < 2) return false;
    const ValueId b = node.input(1);
    if (Batched(b) || Rank(b) < 0 ||
        (Rank(b) > 2 && !BroadcastsAlongRows(b, Rank(node.input(0))))) {
      return false;
    }
    return FusedKeepsRows(node);
  }

  bool NodeKeepsRows(const Node& node) const {
    const std::string_view op = node.op_type;
    if (node.domain == kBrigadeDomain) {
      if (op == "FusedConv") return FusedKeepsRows(node);
      if (op == "FusedMatMul") return MatMulKeepsRows(node);
      return false;
    }
    if (!node.domain.empty()) return false;
    if (op == "MatMul" || op == "Gemm") return MatMulKeepsRows(node);
    if (RowWiseOps().contains(op)) {
      if (!Batched(node.input(0)) || !OnlyFirstOutput(node)) return false;
      for (size_t k = 1; k < node.inputs.size(); ++k) {
        if (Batched(node.inputs[k])) return false;
      }
      return true;
    }
    if (BroadcastOps().contains(op)) {
      if (!OnlyFirstOutput(node)) return false;
      const int rank = Rank(node.outputs[0]);
      bool any_batched = false;
      for (ValueId input : node.inputs) {
        if (!RowAligned(input, rank)) return false;
        any_batched = any_batched || Batched(input);
      }
      return rank >= 1 && any_batched;
    }
    if (op == "Flatten") {
      return Batched(node.input(0)) && OnlyFirstOutput(node) &&
             AxisAfterRows(node.attributes.GetInt("axis", 1), Rank(node.input(0)));
    }
    if (op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization") {
      const int64_t default_axis = op == "LayerNormalization" || node.opset >= 13 ? -1 : 1;
      if (!Batched(node.input(0)) || !OnlyFirstOutput(node) ||
          !AxisAfterRows(node.attributes.GetInt("axis", default_axis), Rank(node.input(0)))) {
        return false;
      }
      for (size_t k = 1; k < node.inputs.size(); ++k) {
        if (Batched(node.inputs[k])) return false;
      }
      return true;
    }
    if (op == "Transpose") {
      const auto perm = node.attributes.GetInts("perm");
      return Batched(node.input(0)) && OnlyFirstOutput(node) && !perm.empty() && perm[0] == 0;
    }
    if (op == "Concat") {
      if (!OnlyFirstOutput(node)) return false;
      const int rank = Rank(node.outputs[0]);
      if (!AxisAfterRows(node.attributes.GetInt("axis", 0), rank)) return false;
      for (ValueId input : node.inputs) {
        if (!Batched(input) || Rank(input) != rank) return false;
      }
      return true;
    }
    return false;
  }

  const Graph& graph_;
  std::vector<bool> batched_;
};

}  // namespace

bool RowsAreIndependent(const Graph& graph) {
  if (graph.inputs().empty() || graph.outputs().empty()) return false;
  return RowChecker(graph).Check();
}

int64_t ChunkRows(int64_t batch, size_t row_arena_bytes, size_t budget_bytes) {
  if (batch <= 1 || budget_bytes == 0) return batch;
  const size_t per_row = row_arena_bytes == 0 ? 1 : row_arena_bytes;
  if (per_row * static_cast<size_t>(batch) <= budget_bytes) return batch;
  int64_t chunk = 1;
  for (int64_t c = 1; c < batch; ++c) {
    if (batch % c == 0 && per_row * static_cast<size_t>(c) <= budget_bytes) chunk = c;
  }
  return chunk;
}

size_t DefaultSplitBudgetBytes() {
  // sysfs first: glibc's sysconf derives the L3 size from CPUID, which virtual machines report
  // inconsistently (320 MiB for a 32 MiB L3 on this project's benchmark VM).
  for (int index = 0; index < 16; ++index) {
    const std::string dir = StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    std::ifstream level_file(dir + "level");
    int level = 0;
    if (!(level_file >> level)) break;
    if (level != 3) continue;
    std::ifstream size_file(dir + "size");
    size_t size = 0;
    std::string unit;
    if (!(size_file >> size)) break;
    size_file >> unit;  // "32768K"
    if (!unit.empty() && unit[0] == 'K') size <<= 10;
    if (!unit.empty() && unit[0] == 'M') size <<= 20;
    return size / 2;
  }
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? static_cast<size_t>(l3) / 2 : 0;
}

}  // namespace brigade::engine::onnx
