#ifndef BRIGADE_ROUTE_ENSEMBLE_H_
#define BRIGADE_ROUTE_ENSEMBLE_H_

// Ensemble: runs requests through an EnsemblePlan. Each step becomes a request of its own for
// the step's model, handed to a StepRunner (the server's request pipeline, so every step is
// validated, looked up in its model's cache and queued on its model's scheduler, batching with
// that model's other traffic). A step is sent as soon as the tensors it reads exist; steps that
// do not depend on one another are in flight at the same time. Tensors pass from step to step by
// reference (Tensor shares its storage): no bytes are copied between steps.
//
// Switch and fusion steps (Brigade's fields) run here, not on a model: a switch decides, once
// its input is there, which of its branches runs; the steps of the other branches, and the steps
// reading only what those write, never run (they are settled as skipped, so what waits for them
// goes on). A fusion joins the tensors of the branches that ran (SELECT shares the one there;
// CONCAT, MEAN and WEIGHTED_SUM write a new tensor). A switch that finds no branch for the
// request (or a row) fails it with INVALID_ARGUMENT naming the parameter or tensor.
//
// A switch on a tensor decides per row. When the rows of a batch pick different branches, each
// branch runs on its rows: every tensor holds a set of the request's rows (all of them, or a
// branch's), a step runs on the rows of its condition (the deepest branch it runs under), and
// what it reads is cut to those rows (AssembleRows; a run of consecutive rows is a view). A
// SELECT fusion takes each row from the branch tensor holding it, back in the request's order;
// CONCAT, MEAN, WEIGHTED_SUM and MODEL fusions, which join row by row, refuse inputs holding
// different rows (INVALID_ARGUMENT naming the step and tensor), as does a step given a tensor
// without one row per row of the batch or answering another number of rows. When every row
// picks one branch nothing is cut: the run is the same as for a switch on a parameter.
//
// Per step (Brigade's fields): a timeout (the step request's deadline is the earlier of it and
// the ensemble request's), retries on UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED, and
// a fallback model tried once the retries are spent; and per plan a bound on the requests of one
// step in flight, beyond which step requests wait in a bounded FIFO.
//
// The ensemble request is answered once: with the ensemble outputs it asked for (all of them
// when it named none) when every step has finished, or with the first error, which keeps its
// code and names the ensemble and the step ("ensemble 'e' step 2 (model 'm'): ..."). A request
// that is cancelled or past its deadline sends no further step (CANCELLED, DEADLINE_EXCEEDED);
// steps already sent finish and are dropped.
//
// Thread safety: Run() may be called from any thread, concurrently; it never blocks, and no
// lock is held while a step is sent or the request answered. Step answers may arrive on any
// thread.
// Ownership: shared (std::shared_ptr<const Ensemble>) by the ensemble's model version and its
// runs in flight; the StepRunner is borrowed and must outlive every run.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/clock.h"
#include "core/infer_request.h"
#include "route/ensemble_plan.h"

namespace brigade::route {

// Where step requests go. Must answer every request it is given, exactly once.
class StepRunner {
 public:
  virtual ~StepRunner() = default;
  virtual void RunStep(std::unique_ptr<InferRequest> step) = 0;
};

class Ensemble : public std::enable_shared_from_this<Ensemble> {
 public:
  // `version` is the ensemble version its answers report; `clock` is borrowed and must outlive
  // the ensemble.
  static std::shared_ptr<Ensemble> Create(std::shared_ptr<const EnsemblePlan> plan, int64_t version,
                                          const Clock* clock);

  const EnsemblePlan& plan() const { return *plan_; }

  // Runs `request` (validated against the ensemble's inputs, in their order) through the plan
  // and answers it.
  void Run(std::unique_ptr<InferRequest> request, StepRunner* runner) const;

  // Step requests in flight and waiting, per step (for tests and metrics).
  struct StepLoad {
    int in_flight = 0;
    int waiting = 0;
  };
  std::vector<StepLoad> Load() const;

  // How often each switch took each branch, for /metrics: `by_default` counts the requests
  // that took it as the default_branch (the parameter missing or no branch listing its value).
  // A request whose rows took several branches counts once for each (and once per reason).
  struct BranchCount {
    std::string step;  // the switch's name, or its label when it has none
    std::string branch;
    uint64_t matched = 0;
    uint64_t by_default = 0;
  };
  std::vector<BranchCount> BranchCounts() const;

  struct ConstructionTag {
   private:
    friend class Ensemble;
    ConstructionTag() = default;
  };
  Ensemble(ConstructionTag, std::shared_ptr<const EnsemblePlan> plan, int64_t version,
           const Clock* clock);

 private:
  friend class EnsembleRun;
  // Admits one request of `step` under max_inflight_per_step: runs `send` now, or queues it
  // (false when the queue is full). `send` must not be called under the gate's lock.
  using Send = absl::AnyInvocable<void() &&>;
  bool Admit(int step, Send send) const;
  // One request of `step` is done: the next one waiting, if any, is sent.
  void Release(int step) const;
  // Switch `step` took `branch` for a request.
  void CountBranch(int step, int branch, bool by_default) const;

  struct Gate {
    mutable absl::Mutex mu;
    int in_flight ABSL_GUARDED_BY(mu) = 0;
    std::deque<Send> waiting ABSL_GUARDED_BY(mu);
  };

  const std::shared_ptr<const EnsemblePlan> plan_;
  const std::string version_;
  const Clock* const clock_;
  // One per step; used only when the plan bounds steps in flight.
  const std::unique_ptr<Gate[]> gates_;
  // Per switch step, the index of its first branch in branch_counts_ (-1: not a switch); two
  // counters per branch: matched, then by default.
  std::vector<int> branch_offset_;
  const std::unique_ptr<std::atomic<uint64_t>[]> branch_counts_;
};

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_ENSEMBLE_H_
