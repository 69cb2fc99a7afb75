// A plan's continuation (planner_internal.h): planning stops after a step whose output shape
// depends on the data (KernelDef::dynamic_output), and the rest of the graph is planned once a
// run has reported that shape, from the state the first plan left.

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/check.h"
#include "engine/onnx/exec/planner_internal.h"

namespace brigade::engine::onnx::planner_internal {

struct PlannerState {
  PlanTarget target;
  int threads = 1;
  size_t next_node = 0;  // the first node the continuation plans
  std::deque<PlanValue> values;
  std::vector<int> remaining_uses;
  // Per value: the continuation input it arrives as (graph inputs first, then the carried
  // buffers, ExecutionPlan::carried_slots), or -1 (known, or read by no later node).
  std::vector<int> input_of_value;
  size_t dynamic_value = 0;  // the dynamic step's output
};

void Planner::StopAfter(size_t next_node) {
  std::vector<int> input_of_value = CarryNeededValues();
  auto state =
      std::make_shared<PlannerState>(PlannerState{.target = target_,
                                                  .threads = threads_,
                                                  .next_node = next_node,
                                                  .values = values_,
                                                  .remaining_uses = remaining_uses_,
                                                  .input_of_value = std::move(input_of_value),
                                                  .dynamic_value = static_cast<size_t>(stopped_)});
  plan_->plan_continuation = [state](const Shape& shape, dnnl::stream& stream) {
    Planner planner(state->target, {}, state->threads, stream, /*shape_only=*/false, state.get(),
                    &shape);
    return planner.Build();
  };
}

std::vector<bool> Planner::NeededLater() const {
  // A plain-layout copy is needed when its original is.
  std::vector<bool> needed(values_.size(), false);
  for (size_t i = 0; i < values_.size() && i < remaining_uses_.size(); ++i) {
    needed[i] = values_[i].defined && remaining_uses_[i] > 0;
    if (needed[i] && values_[i].plain_copy >= 0) {
      needed[static_cast<size_t>(values_[i].plain_copy)] = true;
    }
  }
  return needed;
}

std::vector<int> Planner::CarryNeededValues() {
  const std::vector<bool> needed = NeededLater();
  const size_t graph_inputs = graph_.inputs().size();
  std::map<int, int> carried;  // slot → continuation input
  std::vector<int> input_of_value(values_.size(), -1);
  for (size_t i = 0; i < values_.size(); ++i) {
    const PlanValue& v = values_[i];
    if (!needed[i] || v.known || v.slot < 0) continue;
    const Slot& slot = plan_->slots[static_cast<size_t>(v.slot)];
    BRIGADE_CHECK(slot.kind == Slot::Kind::kInput || slot.kind == Slot::Kind::kArena,
                  "before a dynamic step, values live in inputs, constants or the arena");
    if (slot.kind == Slot::Kind::kInput) {
      input_of_value[i] = static_cast<int>(slot.index);
      continue;
    }
    auto [it, inserted] = carried.emplace(v.slot, static_cast<int>(graph_inputs + carried.size()));
    if (inserted) {
      plan_->carried_slots.push_back(v.slot);
      Use(v.slot);  // alive to the end of this plan, where the continuation reads it
    }
    input_of_value[i] = it->second;
  }
  return input_of_value;
}

size_t Planner::Resume() {
  values_ = resume_->values;
  remaining_uses_ = resume_->remaining_uses;
  for (size_t i = 0; i < values_.size(); ++i) {
    PlanValue& v = values_[i];
    if (!v.defined) continue;
    if (v.known) {
      v.slot = AddSlot(Slot{Slot::Kind::kConstant, 0, v.info.constant->data()});
    } else if (resume_->input_of_value[i] >= 0) {
      v.slot = AddSlot(
          Slot{Slot::Kind::kInput, static_cast<size_t>(resume_->input_of_value[i]), nullptr});
    } else {
      v.slot = -1;  // no later node reads it
    }
  }
  values_[resume_->dynamic_value].info.shape = *dynamic_shape_;
  return resume_->next_node;
}

}  // namespace brigade::engine::onnx::planner_internal
