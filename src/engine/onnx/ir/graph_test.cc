#include "engine/onnx/ir/graph.h"

#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Node MakeNode(std::string name, std::vector<ValueId> in, std::vector<ValueId> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = "Relu";
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

TEST(GraphTest, SortTopologicallyReordersOnlyWhatDependenciesRequire) {
  Graph g;
  const ValueId x = g.AddIntermediate("x", DataType::kFp32);
  g.inputs().push_back(x);
  const ValueId a = g.AddIntermediate("a", DataType::kFp32);
  const ValueId b = g.AddIntermediate("b", DataType::kFp32);
  const ValueId c = g.AddIntermediate("c", DataType::kFp32);
  g.nodes().push_back(MakeNode("second", {a}, {b}));
  g.nodes().push_back(MakeNode("first", {x}, {a}));
  g.nodes().push_back(MakeNode("independent", {x}, {c}));
  ASSERT_TRUE(g.SortTopologically().ok());
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0].name, "first");
  EXPECT_EQ(g.nodes()[1].name, "second");
  EXPECT_EQ(g.nodes()[2].name, "independent");
}

TEST(GraphTest, SortTopologicallyReportsACycleByNodeName) {
  Graph g;
  const ValueId a = g.AddIntermediate("a", DataType::kFp32);
  const ValueId b = g.AddIntermediate("b", DataType::kFp32);
  g.nodes().push_back(MakeNode("n1", {b}, {a}));
  g.nodes().push_back(MakeNode("n2", {a}, {b}));
  const absl::Status status = g.SortTopologically();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("cycle"), std::string::npos);
}

TEST(GraphTest, SortTopologicallyRejectsAnUndefinedInput) {
  Graph g;
  const ValueId ghost = g.AddIntermediate("ghost", DataType::kFp32);
  const ValueId out = g.AddIntermediate("out", DataType::kFp32);
  g.nodes().push_back(MakeNode("reader", {ghost}, {out}));
  const absl::Status status = g.SortTopologically();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("ghost"), std::string::npos);
}

TEST(GraphTest, CompactDropsRemovedNodesAndTheirUnusedConstants) {
  Graph g;
  const ValueId w = g.AddConstant("w", *Tensor::Zeros(DataType::kFp32, Shape{4}));
  const ValueId y = g.AddIntermediate("y", DataType::kFp32);
  g.nodes().push_back(MakeNode("uses_w", {w}, {y}));
  g.outputs().push_back(y);
  g.nodes()[0].removed = true;
  g.Compact();
  EXPECT_TRUE(g.nodes().empty());
  EXPECT_FALSE(g.value(w).is_constant());
}

TEST(GraphTest, ReplaceAllUsesRewiresNodesAndGraphOutputs) {
  Graph g;
  const ValueId x = g.AddIntermediate("x", DataType::kFp32);
  const ValueId y = g.AddIntermediate("y", DataType::kFp32);
  const ValueId z = g.AddIntermediate("z", DataType::kFp32);
  g.inputs().push_back(x);
  g.nodes().push_back(MakeNode("r", {y}, {z}));
  g.outputs().push_back(y);
  g.ReplaceAllUses(y, x);
  EXPECT_EQ(g.nodes()[0].inputs[0], x);
  EXPECT_EQ(g.outputs()[0], x);
}

TEST(GraphTest, IndexListsProducerAndEachReaderOnce) {
  Graph g;
  const ValueId x = g.AddIntermediate("x", DataType::kFp32);
  const ValueId y = g.AddIntermediate("y", DataType::kFp32);
  const ValueId z = g.AddIntermediate("z", DataType::kFp32);
  g.inputs().push_back(x);
  g.nodes().push_back(MakeNode("p", {x}, {y}));
  Node twice = MakeNode("q", {y, y}, {z});
  g.nodes().push_back(twice);
  g.outputs().push_back(z);
  GraphIndex index(g);
  EXPECT_EQ(index.producer(y), 0);
  EXPECT_EQ(index.producer(x), -1);
  EXPECT_EQ(index.consumers(y).size(), 1u);
  EXPECT_TRUE(index.HasSingleConsumer(y));
  EXPECT_FALSE(index.HasSingleConsumer(z));  // a graph output
}

TEST(GraphTest, UniqueNameNeverRepeatsAnExistingName) {
  Graph g;
  g.AddIntermediate("v", DataType::kFp32);
  const std::string fresh = g.UniqueName("v");
  EXPECT_NE(fresh, "v");
  EXPECT_EQ(g.FindValue(fresh), kNoValue);
}

TEST(GraphTest, CopiesOwnTheirSubgraphs) {
  // The passes rewrite subgraphs in place: a copy of a graph (of a node) must not share them.
  Graph body;
  Value x;
  x.name = "x";
  body.inputs().push_back(body.AddValue(x));
  Attribute attribute;
  attribute.kind = Attribute::Kind::kGraph;
  attribute.g = SubgraphPtr(std::move(body));
  Node loop;
  loop.name = "loop";
  loop.op_type = "Loop";
  loop.attributes.Set("body", std::move(attribute));
  Graph graph;
  graph.nodes().push_back(std::move(loop));

  Graph copy = graph;
  Subgraphs(copy.nodes()[0])[0]->g->inputs().clear();
  ASSERT_EQ(Subgraphs(graph.nodes()[0]).size(), 1u);
  EXPECT_EQ(Subgraphs(graph.nodes()[0])[0]->g->inputs().size(), 1u);
  EXPECT_TRUE(Subgraphs(copy.nodes()[0])[0]->g->inputs().empty());
}

}  // namespace
}  // namespace brigade::engine::onnx
