//===- Planner.cpp - Choosing what to recompute ---------------------------===//
//
// This file implements the marking problem of a training step, its exact
// evaluator (checkpoint plan applied to a copy, then the memory profile) and
// the sequential, sqrt, selective and budget planners of -remat-mark.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/Planner.h"

#include "remat/Analysis/CheckpointPlan.h"
#include "remat/Analysis/CostModel.h"
#include "remat/Analysis/Liveness.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <numeric>
#include <limits>
#include <set>
#include <tuple>

using namespace mlir;

namespace remat {

//===----------------------------------------------------------------------===//
// MarkingProblem
//===----------------------------------------------------------------------===//

/// Ops that cost nothing to keep or to copy; they follow their users.
static bool isFreeOp(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() || isa<tensor::EmptyOp>(op);
}

FailureOr<MarkingProblem> MarkingProblem::build(FunctionOpInterface function) {
  MarkingProblem problem;
  problem.function = function;
  Block &body = function.getFunctionBody().front();
  BackwardOp backward = getBackwardOp(function.getFunctionBody());
  if (!backward)
    return function.emitOpError("has no 'remat.backward' to plan for");
  if (failed(computeMemoryProfile(function)))
    return failure();
  unsigned position = 0;
  for (Operation &op : body) {
    if (&op == backward.getOperation())
      break;
    unsigned at = position++;
    if (isFreeOp(&op) || isa<RngUniformOp>(op) ||
        !getUnclonableReason(&op).empty())
      continue;
    int64_t resultBytes = 0;
    for (Value result : op.getResults())
      resultBytes += getValueBytes(result).value_or(0);
    problem.ops.push_back(&op);
    problem.flops.push_back(getOpFlops(&op).value_or(0));
    problem.bytes.push_back(resultBytes);
    problem.positions.push_back(at);
  }
  return problem;
}

void MarkingProblem::writeMarks(Block &body, ArrayRef<int64_t> marking,
                                ArrayRef<bool> saveInSegment) const {
  SmallVector<Operation *, 0> forward;
  Operation *backward = getBackwardOp(*body.getParent()).getOperation();
  for (Operation &op : body) {
    if (&op == backward)
      break;
    op.removeAttr(RematDialect::kSegmentAttrName);
    op.removeAttr(RematDialect::kPolicyAttrName);
    forward.push_back(&op);
  }
  Builder builder(body.getParentOp()->getContext());
  for (auto [index, position] : llvm::enumerate(positions)) {
    Operation *op = forward[position];
    if (!saveInSegment.empty() && saveInSegment[index]) {
      setSegmentPath(op, {0});
      op->setAttr(RematDialect::kPolicyAttrName, builder.getStringAttr("save"));
    } else if (marking[index] != kSaved) {
      setSegmentPath(op, {marking[index]});
    }
  }
  // A free op joins the lowest segment among its users, so that recomputing
  // it neither saves a constant nor keeps an empty tensor alive.
  for (Operation *op : forward) {
    if (!isFreeOp(op))
      continue;
    std::optional<int64_t> segment;
    for (Operation *user : op->getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top || top->getAttrOfType<StringAttr>(RematDialect::kPolicyAttrName))
        continue;
      SmallVector<int64_t, 2> path = getSegmentPath(top);
      if (!path.empty() && (!segment || path.front() < *segment))
        segment = path.front();
    }
    if (segment)
      setSegmentPath(op, {*segment});
  }
}

PlanCost MarkingProblem::evaluate(ArrayRef<int64_t> marking) const {
  Operation *copy = function->clone();
  auto copyFunction = cast<FunctionOpInterface>(copy);
  writeMarks(copyFunction.getFunctionBody().front(), marking, {});
  applyCheckpointPlan(CheckpointPlan::compute(copyFunction));

  PlanCost cost;
  // build() checked that the function has static shapes.
  cost.peakBytes = computeMemoryProfile(copyFunction)->peakBytes;
  BackwardOp backward = getBackwardOp(copyFunction.getFunctionBody());
  for (Operation &op : backward.getBody().front())
    if (op.hasAttr(RematDialect::kCloneOfAttrName))
      cost.recomputeFlops += getOpFlops(&op).value_or(0);
  copy->destroy();
  return cost;
}

void MarkingProblem::apply(ArrayRef<int64_t> marking,
                           ArrayRef<bool> saveInSegment) const {
  FunctionOpInterface target = function;
  writeMarks(target.getFunctionBody().front(), marking, saveInSegment);
}

//===----------------------------------------------------------------------===//
// Sequential, sqrt, selective
//===----------------------------------------------------------------------===//

Marking planSequential(const MarkingProblem &problem, unsigned segments) {
  size_t n = problem.size();
  Marking marking(n, kSaved);
  if (segments == 0 || n == 0)
    return marking;
  double total = 0;
  for (size_t i = 0; i < n; ++i)
    total += problem.getFlops(i);
  double prefix = 0;
  for (size_t i = 0; i < n; ++i) {
    // The segment holding the op's midpoint, by FLOPs or else by count.
    double mid = total > 0 ? (prefix + problem.getFlops(i) / 2.0) / total
                           : (i + 0.5) / n;
    prefix += problem.getFlops(i);
    int64_t segment = std::min<int64_t>(segments - 1,
                                        static_cast<int64_t>(mid * segments));
    marking[i] = segment == segments - 1 ? kSaved : segment;
  }
  return marking;
}

/// Heavy ops: at least a tenth of the FLOPs of the costliest op.
static SmallVector<bool> findHeavyOps(const MarkingProblem &problem) {
  int64_t most = 0;
  for (size_t i = 0; i < problem.size(); ++i)
    most = std::max(most, problem.getFlops(i));
  SmallVector<bool> heavy(problem.size(), false);
  for (size_t i = 0; i < problem.size(); ++i)
    heavy[i] = most > 0 && problem.getFlops(i) * 10 >= most;
  return heavy;
}

unsigned countLayers(const MarkingProblem &problem) {
  unsigned boundaries = 0;
  for (size_t i = 1; i + 1 < problem.size(); ++i)
    if (problem.getBytes(i) * 2 <= problem.getBytes(i - 1) &&
        problem.getBytes(i) * 2 <= problem.getBytes(i + 1))
      ++boundaries;
  if (boundaries >= 2)
    return boundaries + 1;
  SmallVector<bool> heavy = findHeavyOps(problem);
  return std::max<unsigned>(1, llvm::count(heavy, true));
}

Marking planSqrt(const MarkingProblem &problem) {
  unsigned layers = countLayers(problem);
  return planSequential(problem,
                        static_cast<unsigned>(std::ceil(std::sqrt(layers))));
}

Marking planSelective(const MarkingProblem &problem,
                      const llvm::StringSet<> &saveOps,
                      const llvm::StringSet<> &saveNames,
                      SmallVectorImpl<bool> &saved) {
  Marking marking(problem.size(), 0);
  saved.assign(problem.size(), false);
  for (auto [index, op] : llvm::enumerate(problem.getOps())) {
    auto name = op->getAttrOfType<StringAttr>(RematDialect::kNameAttrName);
    if (saveOps.contains(op->getName().getStringRef()) ||
        (name && saveNames.contains(name.getValue()))) {
      marking[index] = kSaved;
      saved[index] = true;
    }
  }
  return marking;
}

//===----------------------------------------------------------------------===//
// BudgetPlanner
//===----------------------------------------------------------------------===//

void BudgetPlanner::add(Marking marking) {
  PlanCost cost = problem.evaluate(marking);
  candidates.push_back({std::move(marking), cost});
}

BudgetPlanner::BudgetPlanner(const MarkingProblem &problem,
                             BudgetOptions options)
    : problem(problem) {
  size_t n = problem.size();
  std::set<Marking> seen;
  auto tryAdd = [&](Marking marking) -> bool {
    if (!seen.insert(marking).second)
      return false;
    add(std::move(marking));
    return true;
  };
  tryAdd(Marking(n, kSaved));

  if (n <= options.exactLimit) {
    exact = true;
    for (uint64_t mask = 1; mask < (uint64_t(1) << n); ++mask) {
      Marking marking(n, kSaved);
      for (size_t i = 0; i < n; ++i)
        if (mask >> i & 1)
          marking[i] = 0;
      tryAdd(std::move(marking));
    }
  } else {
    SmallVector<bool> heavy = findHeavyOps(problem);
    auto withHeavySaved = [&](Marking marking) {
      for (size_t i = 0; i < n; ++i)
        if (heavy[i])
          marking[i] = kSaved;
      return marking;
    };
    // The other policies' plans, so that budget is never above them.
    tryAdd(Marking(n, 0));
    tryAdd(withHeavySaved(Marking(n, 0)));
    tryAdd(planSqrt(problem));
    for (unsigned segments = 2; segments <= std::min<size_t>(64, n);
         ++segments) {
      tryAdd(planSequential(problem, segments));
      tryAdd(withHeavySaved(planSequential(problem, segments)));
    }
    // Prefixes of the ops by bytes freed per FLOP recomputed.
    SmallVector<size_t, 0> order(n);
    std::iota(order.begin(), order.end(), 0);
    llvm::sort(order, [&](size_t a, size_t b) {
      int64_t x = problem.getBytes(a) * (problem.getFlops(b) + 1);
      int64_t y = problem.getBytes(b) * (problem.getFlops(a) + 1);
      return x != y ? x > y : a < b;
    });
    unsigned steps = std::min<size_t>(32, n);
    for (unsigned step = 1; step <= steps; ++step) {
      Marking marking(n, kSaved);
      for (size_t k = 0; k < n * step / steps; ++k)
        marking[order[k]] = 0;
      tryAdd(std::move(marking));
    }
    // Greedy refinement of the Pareto front: unmark the costliest ops one at
    // a time while the peak does not grow.
    std::set<Marking> refined;
    while (candidates.size() < options.maxEvaluations) {
      SmallVector<size_t, 0> byPeak(candidates.size());
      std::iota(byPeak.begin(), byPeak.end(), 0);
      llvm::sort(byPeak, [&](size_t a, size_t b) {
        const PlanCost &x = candidates[a].cost, &y = candidates[b].cost;
        return std::make_tuple(x.peakBytes, x.recomputeFlops, a) <
               std::make_tuple(y.peakBytes, y.recomputeFlops, b);
      });
      std::optional<size_t> next;
      int64_t bestFlops = std::numeric_limits<int64_t>::max();
      for (size_t index : byPeak) {
        if (candidates[index].cost.recomputeFlops >= bestFlops)
          continue;
        bestFlops = candidates[index].cost.recomputeFlops;
        if (bestFlops > 0 && !refined.count(candidates[index].marking)) {
          next = index;
          break;
        }
      }
      if (!next)
        break;
      Marking current = candidates[*next].marking;
      PlanCost currentCost = candidates[*next].cost;
      refined.insert(current);
      SmallVector<size_t, 0> marked;
      for (size_t i = 0; i < n; ++i)
        if (current[i] != kSaved && problem.getFlops(i) > 0)
          marked.push_back(i);
      llvm::sort(marked, [&](size_t a, size_t b) {
        return problem.getFlops(a) != problem.getFlops(b)
                   ? problem.getFlops(a) > problem.getFlops(b)
                   : a < b;
      });
      for (size_t i : marked) {
        if (candidates.size() >= options.maxEvaluations)
          break;
        Marking trial = current;
        trial[i] = kSaved;
        if (!tryAdd(trial))
          continue;
        if (candidates.back().cost.peakBytes <= currentCost.peakBytes) {
          current = std::move(trial);
          currentCost = candidates.back().cost;
        }
      }
      refined.insert(current);
    }
  }

  unmarkedPeak = candidates.front().cost.peakBytes;
  minPeak = unmarkedPeak;
  for (const PlanPoint &point : candidates)
    minPeak = std::min(minPeak, point.cost.peakBytes);
}

std::optional<PlanPoint> BudgetPlanner::solve(int64_t budget) const {
  const PlanPoint *best = nullptr;
  for (const PlanPoint &point : candidates) {
    if (point.cost.peakBytes > budget)
      continue;
    if (!best ||
        std::make_pair(point.cost.recomputeFlops, point.cost.peakBytes) <
            std::make_pair(best->cost.recomputeFlops, best->cost.peakBytes))
      best = &point;
  }
  if (!best)
    return std::nullopt;
  return *best;
}

int64_t BudgetPlanner::getLowerBound(int64_t budget) const {
  std::optional<PlanPoint> best = solve(budget);
  return exact && best ? best->cost.recomputeFlops : 0;
}

} // namespace remat
