//===- Planner.cpp - Choosing what to recompute ---------------------------===//
//
// This file implements the marking problem of a training step, its exact
// evaluator (checkpoint plan applied to a copy, then the memory profile) and
// the sequential, sqrt, selective and budget planners of -remat-mark.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/Planner.h"
#include "remat/Memory/MemoryPlan.h"

#include "remat/Analysis/CheckpointPlan.h"
#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/ApplyCheckpointPlan.h"
#include "remat/Planning/MemoryProfile.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/APInt.h"

#ifdef REMAT_HAVE_GLPK
#include <glpk.h>
#endif

#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
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
  // Every evaluation profiles memory, which needs the static size of every
  // result of the forward's and the backward region's ops.
  auto checkStatic = [](Block &block) {
    for (Operation &op : block)
      for (OpResult result : op.getResults())
        if (!getValueBytes(result)) {
          (void)emitUnsizedResultError(result, "planning");
          return false;
        }
    return true;
  };
  if (!checkStatic(body) || !checkStatic(backward.getBody().front()))
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
    problem.annotated.emplace_back(getSegmentPath(&op));
  }
  if (llvm::all_of(problem.annotated,
                   [](const SegmentPath &path) { return path.empty(); }))
    problem.annotated.clear();
  problem.annotated.resize(problem.ops.size());
  function->walk([&](Operation *) { ++problem.numFunctionOps; });
  if (auto func = dyn_cast<func::FuncOp>(function.getOperation()))
    problem.keepReturnedBuffers = mustKeepReturnedBuffers(func);
  return problem;
}

// Why every marking satisfies the relaxation with its exact peak: a decision
// op left unmarked whose result the backward region reads is saved, so its
// storage is live from its definition to the backward region; it has storage
// of its own (hasOwnStorage) because the backward use keeps it from being
// fused or a fresh init, in every marking; and two saved values never share
// storage, as an in-place write takes over only a buffer that dies at the
// writer. Ops that are no decision (stateful random, unclonable) are saved in
// every marking. So at the backward region's first op all of them are live
// together, and at a forward op all saved values defined before it and its
// own result (if no backward op reads it: else it is a term). Clones and the
// backward region's own values only add to that.
ArrayRef<MarkingProblem::RelaxationRow> MarkingProblem::getRelaxation() const {
  if (!relaxation)
    buildRelaxation();
  return *relaxation;
}

void MarkingProblem::walkRelaxation(
    function_ref<void(std::optional<unsigned>, int64_t, int64_t)> visit) const {
  Region &functionBody = function->getRegion(0);
  BackwardOp backward = getBackwardOp(functionBody);
  auto readByBackward = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return backward->isAncestor(user);
    });
  };
  auto ownBytes = [](OpResult result) -> int64_t {
    return hasOwnStorage(result) ? getValueBytes(result).value_or(0) : 0;
  };
  size_t next = 0;
  for (Operation &op : functionBody.front()) {
    if (&op == backward.getOperation())
      break;
    int64_t saved = 0, unsaved = 0;
    for (OpResult result : op.getResults())
      (readByBackward(result) ? saved : unsaved) += ownBytes(result);
    std::optional<unsigned> decision;
    if (next < ops.size() && ops[next] == &op)
      decision = next++;
    visit(decision, saved, unsaved);
  }
}

void MarkingProblem::buildRelaxation() const {
  relaxation.emplace();
  RelaxationRow atBackward;
  int64_t fixedSaved = 0;
  walkRelaxation(
      [&](std::optional<unsigned> decision, int64_t saved, int64_t unsaved) {
        if (!decision) {
          fixedSaved += saved;
          return;
        }
        if (saved > 0)
          atBackward.terms.push_back({*decision, saved});
        RelaxationRow atOp;
        atOp.terms = atBackward.terms;
        atOp.constant = fixedSaved + unsaved;
        relaxation->push_back(std::move(atOp));
      });
  atBackward.constant = fixedSaved;
  relaxation->push_back(std::move(atBackward));
}

int64_t MarkingProblem::getRelaxationPeakBound() const {
  // The rows' constants, as buildRelaxation states them.
  int64_t fixedSaved = 0, bound = 0;
  walkRelaxation(
      [&](std::optional<unsigned> decision, int64_t saved, int64_t unsaved) {
        if (decision)
          bound = std::max(bound, fixedSaved + unsaved);
        else
          fixedSaved += saved;
      });
  return std::max(bound, fixedSaved);
}

/// Returns true if elementwise fusion (canFuseElementwise) computes `value`
/// inside `next` wherever nothing but `next` reads it: `next` reads it once
/// and no other forward op does (the backward region's readers aside), so
/// an instance that only `next` reads is never stored.
static bool isFusibleInto(OpResult value, Operation *next) {
  if (!canFuseElementwise(value.getOwner(), next))
    return false;
  unsigned forwardUses = 0;
  for (OpOperand &use : value.getUses()) {
    if (isa<BackwardOp>(use.getOwner()->getParentOp()) ||
        use.getOwner()->getParentOfType<BackwardOp>())
      continue;
    if (use.getOwner() != next)
      return false;
    ++forwardUses;
  }
  return forwardUses == 1;
}

namespace {
/// Where the backward region reads the forward's values, as getChain needs
/// it: each forward result's first and last reader among the backward
/// body's ops (`numOps` and -1 if none), and the backward region's own live
/// bytes at each of its ops.
struct BackwardReads {
  int64_t numOps = 0;
  DenseMap<Value, std::pair<int64_t, int64_t>> spans;
  SmallVector<int64_t> ownLive;
};
} // namespace

/// Computes the BackwardReads of `function`'s `backward`. The backward's own
/// live bytes, without marks, are the profile's live bytes less the saved
/// forward values still live.
static BackwardReads computeBackwardReads(FunctionOpInterface function,
                                          BackwardOp backward) {
  BackwardReads reads;
  FailureOr<MemoryProfile> profile = computeMemoryProfile(function);
  Block &backwardBody = backward.getBody().front();
  DenseMap<Operation *, int64_t> readerPosition;
  int64_t &base = reads.numOps;
  for (Operation &op : backwardBody)
    readerPosition[&op] = base++;
  SmallVector<int64_t> forwardLive(base + 1, 0);
  auto readers = [&](Value value) {
    int64_t first = base, last = -1;
    for (Operation *user : value.getUsers())
      if (Operation *top = backwardBody.findAncestorOpInBlock(*user)) {
        first = std::min(first, readerPosition[top]);
        last = std::max(last, readerPosition[top]);
      }
    return std::make_pair(first, last);
  };
  // Each forward result's first and last backward reader, walked once.
  for (Operation &op : function->getRegion(0).front()) {
    if (&op == backward.getOperation())
      break;
    for (OpResult result : op.getResults()) {
      auto [first, last] = reads.spans[result] = readers(result);
      if (last >= 0 && hasOwnStorage(result)) {
        // Live from the backward's start to the last reader.
        forwardLive[0] += getValueBytes(result).value_or(0);
        forwardLive[last + 1] -= getValueBytes(result).value_or(0);
      }
    }
  }
  reads.ownLive.assign(base, 0);
  if (succeeded(profile)) {
    // The backward body's ops follow the forward's in the schedule (and
    // the function's terminator follows them).
    int64_t offset = llvm::find(profile->schedule, &backwardBody.front()) -
                     profile->schedule.begin();
    int64_t live = 0;
    for (int64_t p = 0; p < base; ++p) {
      live += forwardLive[p];
      reads.ownLive[p] =
          std::max<int64_t>(0, profile->liveBytes[offset + p] - live);
    }
  }
  return reads;
}

/// The chain stage of the decision ops [begin, end) of `ops`, and the first
/// and last backward op that reads any of their results.
static ChainStage buildChainStage(ArrayRef<Operation *> ops,
                                  ArrayRef<int64_t> flops, size_t begin,
                                  size_t end, const BackwardReads &reads,
                                  int64_t &firstReader, int64_t &lastReader) {
  size_t n = ops.size();
  ChainStage stage;
  // The profile's in-place rule (writesIntoOperand): the stage's first op
  // writes into the previous output if it has the result's type.
  if (begin > 0) {
    Operation *first = ops[begin];
    stage.inPlace = writesIntoOperand(first) &&
                    llvm::any_of(first->getOperands(), [&](Value operand) {
                      return operand.getDefiningOp() == ops[begin - 1] &&
                             operand.getType() == first->getResult(0).getType();
                    });
  }
  firstReader = reads.numOps;
  lastReader = -1;
  for (size_t i = begin; i < end; ++i) {
    int64_t own = 0, read = 0;
    for (OpResult result : ops[i]->getResults()) {
      auto [first, last] = reads.spans.lookup(result);
      firstReader = std::min(firstReader, first);
      lastReader = std::max(lastReader, last);
      bool isRead = last >= 0;
      // A value the backward reads has storage where the backward reads
      // it; the stage's output, if fusible into the next stage's op, where
      // it is not fused (ChainStage::fusedOut).
      bool fusedOut =
          i + 1 == end && end < n && isFusibleInto(result, ops[end]);
      stage.fusedOut |= fusedOut;
      int64_t bytes = isRead || fusedOut || hasOwnStorage(result)
                          ? getValueBytes(result).value_or(0)
                          : 0;
      own += bytes;
      read += isRead ? bytes : 0;
    }
    stage.flops = addFlops(stage.flops, flops[i]);
    stage.transientBytes += own;
    if (i + 1 == end) {
      stage.outBytes = own;
      stage.outRead = read > 0;
    } else {
      stage.keptBytes += read;
    }
  }
  return stage;
}

/// Sets each stage's backward bytes: the most of the backward's own live
/// bytes over the span from its first reader (the backward's start for the
/// first) to its last; its after bytes, the most from there to the next
/// stage's first reader.
static void assignBackwardBytes(MutableArrayRef<ChainStage> chain,
                                ArrayRef<int64_t> firstReaders,
                                ArrayRef<int64_t> lastReaders,
                                const BackwardReads &reads) {
  int64_t base = reads.numOps;
  SmallVector<int64_t> starts;
  for (int64_t reader : firstReaders)
    if (reader < base)
      starts.push_back(reader);
  llvm::sort(starts);
  for (auto [stage, reader, last] :
       llvm::zip(chain, firstReaders, lastReaders)) {
    if (reader >= base)
      continue;
    auto next = llvm::upper_bound(starts, reader);
    int64_t from = reader == starts.front() ? 0 : reader;
    int64_t to = next == starts.end() ? base : *next;
    for (int64_t p = from; p < to; ++p)
      (p <= last ? stage.backwardBytes : stage.afterBytes) = std::max(
          p <= last ? stage.backwardBytes : stage.afterBytes, reads.ownLive[p]);
  }
}

std::vector<ChainStage>
MarkingProblem::getChain(unsigned maxStages,
                         SmallVectorImpl<size_t> &firstOp) const {
  BackwardOp backward = getBackwardOp(function->getRegion(0));
  size_t n = ops.size();
  size_t count = std::min<size_t>(n, std::max(1u, maxStages));
  firstOp.clear();
  std::vector<ChainStage> chain;
  BackwardReads reads = computeBackwardReads(function, backward);
  SmallVector<int64_t> firstReaders, lastReaders;
  for (size_t k = 0; k < count; ++k) {
    size_t begin = k * n / count, end = (k + 1) * n / count;
    firstOp.push_back(begin);
    int64_t firstReader, lastReader;
    chain.push_back(buildChainStage(ops, flops, begin, end, reads, firstReader,
                                    lastReader));
    firstReaders.push_back(firstReader);
    lastReaders.push_back(lastReader);
  }
  firstOp.push_back(n);
  assignBackwardBytes(chain, firstReaders, lastReaders, reads);
  return chain;
}

void MarkingProblem::writeMarks(Block &body, ArrayRef<SegmentPath> marking,
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
    } else if (!marking[index].empty()) {
      setSegmentPath(op, marking[index]);
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

/// measureRewrittenCopies of `count` markings of `function`, the i-th
/// written on its copy by `mark(i, copy)`, each checkpointed by
/// -remat-checkpoint's own rewrite.
static SmallVector<MeasuredCost>
measureCheckpointedCopies(FunctionOpInterface function, size_t count,
                          function_ref<void(size_t, FunctionOpInterface)> mark,
                          const MemoryPlanPipeline &pipeline,
                          bool keepReturned) {
  return measureRewrittenCopies(
      function, count,
      [&](size_t index, FunctionOpInterface copy) {
        mark(index, copy);
        applyCheckpointPlan(CheckpointPlan::compute(copy));
      },
      pipeline, keepReturned);
}

FailureOr<StepCost> measureCheckpointedCopy(
    FunctionOpInterface function, function_ref<void(FunctionOpInterface)> mark,
    const MemoryPlanPipeline &pipeline, bool keepReturned, std::string &error) {
  return measureRewrittenCopy(
      function,
      [&](FunctionOpInterface copy) {
        mark(copy);
        applyCheckpointPlan(CheckpointPlan::compute(copy));
      },
      pipeline, keepReturned, error);
}

/// The first op of each top-level checkpoint segment of `function`, by
/// segment, if it is marked and not yet checkpointed (no op is a clone and
/// no stateful random op is marked); none otherwise.
std::map<int64_t, Operation *>
getSegmentsToCheckpoint(FunctionOpInterface function) {
  std::map<int64_t, Operation *> segments;
  bool checkpointed = false;
  function.getFunctionBody().walk([&](Operation *op) {
    if (op->hasAttr(RematDialect::kCloneOfAttrName) ||
        op->hasAttr(RematDialect::kRerunOfAttrName))
      checkpointed = true;
    SmallVector<int64_t, 2> path = getSegmentPath(op);
    if (path.empty())
      return;
    if (isa<RngUniformOp>(op))
      checkpointed = true;
    segments.try_emplace(path.front(), op);
  });
  if (checkpointed)
    return {};
  return segments;
}

FailureOr<std::optional<SegmentEffects>>
measureSegmentEffects(func::FuncOp function, const MemoryPlanPipeline &pipeline,
                      bool measureUnmarked, std::string &error) {
  std::map<int64_t, Operation *> segments = getSegmentsToCheckpoint(function);
  if (segments.empty())
    return std::optional<SegmentEffects>();
  // What each measurement recomputes: no segment, every one, or one.
  enum class Keep { None, All, One };
  SmallVector<std::pair<Keep, int64_t>> which;
  if (measureUnmarked)
    which.push_back({Keep::None, 0});
  which.push_back({Keep::All, 0});
  for (auto &entry : segments)
    which.push_back({Keep::One, entry.first});
  SmallVector<MeasuredCost> costs = measureCheckpointedCopies(
      function, which.size(),
      [&](size_t i, FunctionOpInterface copy) {
        Keep keep = which[i].first;
        int64_t only = which[i].second;
        if (keep == Keep::All)
          return;
        copy.getFunctionBody().walk([&](Operation *op) {
          SmallVector<int64_t, 2> path = getSegmentPath(op);
          if (!path.empty() && (keep == Keep::None || path.front() != only))
            op->removeAttr(RematDialect::kSegmentAttrName);
        });
      },
      pipeline, mustKeepReturnedBuffers(function));
  SegmentEffects effects;
  for (auto [i, result] : llvm::enumerate(costs)) {
    if (!result.cost) {
      error = result.error;
      return failure();
    }
    int64_t peak = result.cost->peakBytes;
    auto [keep, only] = which[i];
    if (keep == Keep::None)
      effects.unmarkedPeak = peak;
    else if (keep == Keep::All)
      effects.allPeak = peak;
    else
      effects.alone[only] = {segments[only], peak};
  }
  return std::optional<SegmentEffects>(std::move(effects));
}

FailureOr<StepCost>
MarkingProblem::measureOnMemoryPlan(ArrayRef<SegmentPath> marking,
                                    const MemoryPlanPipeline &pipeline,
                                    std::string &error) const {
  return measureCheckpointedCopy(
      function,
      [&](FunctionOpInterface copy) {
        writeMarks(copy.getFunctionBody().front(), marking, {});
      },
      pipeline, keepReturnedBuffers, error);
}

SmallVector<MeasuredCost>
MarkingProblem::measureOnMemoryPlans(ArrayRef<Marking> markings,
                                     const MemoryPlanPipeline &pipeline) const {
  return measureCheckpointedCopies(
      function, markings.size(),
      [&](size_t index, FunctionOpInterface copy) {
        writeMarks(copy.getFunctionBody().front(), markings[index], {});
      },
      pipeline, keepReturnedBuffers);
}

StepCost MarkingProblem::evaluate(ArrayRef<SegmentPath> marking) const {
  Operation *copy = function->clone();
  auto copyFunction = cast<FunctionOpInterface>(copy);
  writeMarks(copyFunction.getFunctionBody().front(), marking, {});
  applyCheckpointPlan(CheckpointPlan::compute(copyFunction));

  StepCost cost;
  // build() checked that the function has static shapes.
  cost.peakBytes = computeMemoryProfile(copyFunction)->peakBytes;
  cost.recomputeFlops =
      countRecomputeFlops(getBackwardOp(copyFunction.getFunctionBody()));
  copy->destroy();
  return cost;
}

SmallVector<StepCost>
MarkingProblem::evaluateAll(ArrayRef<Marking> markings) const {
  SmallVector<StepCost> costs(markings.size());
  parallelFor(function->getContext(), 0, markings.size(),
              [&](size_t index) { costs[index] = evaluate(markings[index]); });
  return costs;
}

void MarkingProblem::apply(ArrayRef<SegmentPath> marking,
                           ArrayRef<bool> saveInSegment) const {
  FunctionOpInterface target = function;
  writeMarks(target.getFunctionBody().front(), marking, saveInSegment);
}

//===----------------------------------------------------------------------===//
// Sequential, sqrt, selective
//===----------------------------------------------------------------------===//

Marking planSequential(const MarkingProblem &problem, unsigned segments) {
  size_t n = problem.size();
  Marking marking(n);
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
    int64_t segment =
        std::min<int64_t>(segments - 1, static_cast<int64_t>(mid * segments));
    if (segment != segments - 1)
      marking[i] = {segment};
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

SmallVector<bool> findDenseOps(const MarkingProblem &problem) {
  SmallVector<bool> dense(problem.size(), false);
  for (size_t i = 0; i < problem.size(); ++i)
    dense[i] = problem.getBytes(i) > 0 &&
               problem.getFlops(i) >= kDenseFlopsPerByte * problem.getBytes(i);
  return dense;
}

Marking planHeavySaved(const MarkingProblem &problem) {
  Marking marking(problem.size(), SegmentPath{0});
  for (auto [index, heavy] : llvm::enumerate(findHeavyOps(problem)))
    if (heavy)
      marking[index].clear();
  return marking;
}

SmallVector<Marking> getPolicyMarkings(const MarkingProblem &problem) {
  SmallVector<Marking> markings;
  markings.push_back(Marking(problem.size(), SegmentPath{0}));
  markings.push_back(planHeavySaved(problem));
  markings.push_back(planSqrt(problem));
  // The model's own checkpoints, as a seed that the budget policy's answer
  // is measured against (transformers' per-layer checkpoints of GPT-2 are
  // below its chain plans).
  ArrayRef<SegmentPath> annotated = problem.getAnnotatedMarking();
  if (llvm::any_of(annotated,
                   [](const SegmentPath &path) { return !path.empty(); }))
    markings.push_back(Marking(annotated.begin(), annotated.end()));
  return markings;
}

Marking planSelective(const MarkingProblem &problem,
                      const llvm::StringSet<> &saveOps,
                      const llvm::StringSet<> &saveNames,
                      SmallVectorImpl<bool> &saved) {
  Marking marking(problem.size(), SegmentPath{0});
  saved.assign(problem.size(), false);
  for (auto [index, op] : llvm::enumerate(problem.getOps())) {
    auto name = op->getAttrOfType<StringAttr>(RematDialect::kNameAttrName);
    if (saveOps.contains(op->getName().getStringRef()) ||
        (name && saveNames.contains(name.getValue()))) {
      marking[index].clear();
      saved[index] = true;
    }
  }
  return marking;
}

//===----------------------------------------------------------------------===//
// BudgetPlanner
//===----------------------------------------------------------------------===//

unsigned BudgetOptions::getPoolLimit(size_t ops) const {
  uint64_t byWork = poolWork / std::max<size_t>(ops, 1);
  uint64_t limit = std::min<uint64_t>(
      maxEvaluations, std::max<uint64_t>(minEvaluations, byWork));
  return static_cast<unsigned>(std::max<uint64_t>(limit, 1));
}

namespace {
/// The markings the budget planner measures while it builds its pool: each
/// at most once, and no more than `limit` in all.
class CandidatePool {
public:
  CandidatePool(const MarkingProblem &problem,
                SmallVectorImpl<MeasuredMarking> &candidates, size_t limit)
      : problem(problem), candidates(candidates), limit(limit) {}

  /// Measures `marking` and adds it; returns false, measuring nothing, if it
  /// was measured before or the pool is full.
  bool tryAdd(Marking marking) {
    if (isFull() || !seen.insert(marking).second)
      return false;
    StepCost cost = problem.evaluate(marking);
    candidates.push_back({std::move(marking), cost});
    return true;
  }

  /// tryAdd of each of `markings` in turn, with the measurements made
  /// together on the context's thread pool: the same candidates, in the
  /// same order. Returns how many were added.
  size_t tryAddAll(SmallVectorImpl<Marking> &&markings) {
    SmallVector<Marking> fresh;
    for (Marking &marking : markings) {
      if (candidates.size() + fresh.size() >= limit)
        break;
      if (seen.insert(marking).second)
        fresh.push_back(std::move(marking));
    }
    SmallVector<StepCost> costs = problem.evaluateAll(fresh);
    for (auto [marking, cost] : llvm::zip_equal(fresh, costs))
      candidates.push_back({std::move(marking), cost});
    return fresh.size();
  }

  bool isFull() const { return candidates.size() >= limit; }
  size_t getLimit() const { return limit; }
  const MarkingProblem &getProblem() const { return problem; }
  ArrayRef<MeasuredMarking> getCandidates() const { return candidates; }

private:
  const MarkingProblem &problem;
  SmallVectorImpl<MeasuredMarking> &candidates;
  size_t limit;
  std::set<Marking> seen;
};
} // namespace

/// Adds the chain dynamic program's Pareto front: nested segments. Beyond the
/// enumeration (`enumerate` false), at most half of the pool's limit, so that
/// the other policies' plans still fit.
static void addChainPlans(CandidatePool &pool, const BudgetOptions &options,
                          bool enumerate) {
  const MarkingProblem &problem = pool.getProblem();
  size_t n = problem.size();
  unsigned plans = options.chainPlans;
  if (!enumerate)
    plans = std::min<size_t>(plans, pool.getLimit() / 2);
  if (plans == 0 || n == 0)
    return;
  SmallVector<size_t> firstOp;
  std::vector<ChainStage> chain =
      problem.getChain(options.chainStages, firstOp);
  SmallVector<Marking> markings;
  for (const ChainPlan &plan :
       ChainPlanner(chain, options.chainUnits).getFront(plans)) {
    Marking marking(n);
    for (size_t k = 0; k < chain.size(); ++k)
      for (size_t i = firstOp[k]; i < firstOp[k + 1]; ++i)
        marking[i] = plan.paths[k];
    markings.push_back(std::move(marking));
  }
  pool.tryAddAll(std::move(markings));
}

/// Adds every subset of recomputed decision ops (as one segment) and, up to
/// BudgetOptions::nestedLimit ops, every nested plan of contiguous segments.
static void addEnumeratedPlans(CandidatePool &pool,
                               const BudgetOptions &options) {
  size_t n = pool.getProblem().size();
  SmallVector<Marking> markings;
  for (uint64_t mask = 1; mask < (uint64_t(1) << n); ++mask) {
    Marking marking(n);
    for (size_t i = 0; i < n; ++i)
      if (mask >> i & 1)
        marking[i] = {0};
    markings.push_back(std::move(marking));
  }
  if (n <= options.nestedLimit)
    forEachNestedPlan(n, /*maxDepth=*/n, [&](ArrayRef<SegmentPath> paths) {
      markings.push_back(Marking(paths.begin(), paths.end()));
    });
  pool.tryAddAll(std::move(markings));
}

/// `marking` with the ops flagged in `saved` taken out of their segments.
static Marking withSaved(Marking marking, ArrayRef<bool> saved) {
  for (auto [path, isSaved] : llvm::zip_equal(marking, saved))
    if (isSaved)
      path.clear();
  return marking;
}

/// Adds the selective plans of `layers`, a segmentation at about one segment
/// a layer: `layers` with the dense ops (findDenseOps) saved, as PyTorch's
/// SAC and JAX's dots_saveable policies keep the matmuls of each checkpoint,
/// and the plans between the two: the first k of its top-level segments in
/// program order selective and the others whole, and the last k, for every
/// k. They span the bytes from the per-layer plan's up to the peak of saving
/// every matmul, at a recomputation that shrinks a layer at a time, where
/// the chain and sequential plans (whole segments recomputed, or only the
/// heaviest ops saved) leave a gap.
static void addSelectivePlans(CandidatePool &pool, const Marking &layers,
                              ArrayRef<bool> dense) {
  SmallVector<int64_t> segments;
  for (const SegmentPath &path : layers)
    if (!path.empty() && !llvm::is_contained(segments, path.front()))
      segments.push_back(path.front());
  if (segments.empty() ||
      llvm::none_of(dense, [](bool isDense) { return isDense; }))
    return;
  SmallVector<Marking> markings = {withSaved(layers, dense)};
  for (size_t k = 1; k < segments.size(); ++k) {
    ArrayRef<int64_t> first = ArrayRef(segments).take_front(k);
    ArrayRef<int64_t> last = ArrayRef(segments).take_back(k);
    Marking fromFirst = layers, fromLast = layers;
    for (auto [index, path] : llvm::enumerate(layers)) {
      if (path.empty() || !dense[index])
        continue;
      if (llvm::is_contained(first, path.front()))
        fromFirst[index].clear();
      if (llvm::is_contained(last, path.front()))
        fromLast[index].clear();
    }
    markings.push_back(std::move(fromFirst));
    markings.push_back(std::move(fromLast));
  }
  pool.tryAddAll(std::move(markings));
}

/// Adds the heuristic markings that do not depend on a budget: the other
/// policies' plans (so that budget is never above them), the selective plans
/// of the model's own segments (else of a segment a layer), sequential for
/// every segment count up to 64 as is, with the heavy ops saved and with the
/// dense ops saved, and prefixes of the ops by bytes freed per FLOP
/// recomputed.
static void addHeuristicPlans(CandidatePool &pool) {
  const MarkingProblem &problem = pool.getProblem();
  size_t n = problem.size();
  pool.tryAddAll(getPolicyMarkings(problem));
  SmallVector<bool> dense = findDenseOps(problem);
  // Selective plans of the model's own segments, else of sequential at a
  // segment a layer.
  ArrayRef<SegmentPath> annotated = problem.getAnnotatedMarking();
  addSelectivePlans(
      pool,
      llvm::any_of(annotated,
                   [](const SegmentPath &path) { return !path.empty(); })
          ? Marking(annotated.begin(), annotated.end())
          : planSequential(problem, countLayers(problem)),
      dense);
  SmallVector<bool> heavy = findHeavyOps(problem);
  SmallVector<Marking> markings;
  for (unsigned segments = 2;
       segments <= std::min<size_t>(kMaxSequentialSegments, n); ++segments) {
    Marking sequential = planSequential(problem, segments);
    markings.push_back(sequential);
    markings.push_back(withSaved(sequential, heavy));
    markings.push_back(withSaved(sequential, dense));
  }
  SmallVector<size_t, 0> order(n);
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](size_t a, size_t b) {
    int64_t x = problem.getBytes(a) * (problem.getFlops(b) + 1);
    int64_t y = problem.getBytes(b) * (problem.getFlops(a) + 1);
    return x != y ? x > y : a < b;
  });
  unsigned steps = std::min<size_t>(32, n);
  for (unsigned step = 1; step <= steps; ++step) {
    Marking marking(n);
    for (size_t k = 0; k < n * step / steps; ++k)
      marking[order[k]] = {0};
    markings.push_back(std::move(marking));
  }
  pool.tryAddAll(std::move(markings));
}

/// The candidate the Pareto front's refinement starts from next: walking the
/// candidates by peak (then FLOPs), the first one that recomputes fewer FLOPs
/// than every lower-peak one, recomputes some, and is not in `refined`.
static std::optional<size_t>
findUnrefinedParetoPoint(ArrayRef<MeasuredMarking> candidates,
                         const std::set<Marking> &refined) {
  SmallVector<size_t, 0> byPeak(candidates.size());
  std::iota(byPeak.begin(), byPeak.end(), 0);
  llvm::sort(byPeak, [&](size_t a, size_t b) {
    const StepCost &x = candidates[a].cost, &y = candidates[b].cost;
    return std::make_tuple(x.peakBytes, x.recomputeFlops, a) <
           std::make_tuple(y.peakBytes, y.recomputeFlops, b);
  });
  int64_t bestFlops = std::numeric_limits<int64_t>::max();
  for (size_t index : byPeak) {
    if (candidates[index].cost.recomputeFlops >= bestFlops)
      continue;
    bestFlops = candidates[index].cost.recomputeFlops;
    if (bestFlops > 0 && !refined.count(candidates[index].marking))
      return index;
  }
  return std::nullopt;
}

/// Greedy refinement of the Pareto front until the pool is full: from each
/// unrefined point of the front, unmark the costliest ops one at a time
/// while the peak does not grow.
static void refineParetoFront(CandidatePool &pool) {
  const MarkingProblem &problem = pool.getProblem();
  size_t n = problem.size();
  std::set<Marking> refined;
  while (!pool.isFull()) {
    std::optional<size_t> next =
        findUnrefinedParetoPoint(pool.getCandidates(), refined);
    if (!next)
      break;
    Marking current = pool.getCandidates()[*next].marking;
    StepCost currentCost = pool.getCandidates()[*next].cost;
    refined.insert(current);
    SmallVector<size_t, 0> marked;
    for (size_t i = 0; i < n; ++i)
      if (!current[i].empty() && problem.getFlops(i) > 0)
        marked.push_back(i);
    llvm::sort(marked, [&](size_t a, size_t b) {
      return problem.getFlops(a) != problem.getFlops(b)
                 ? problem.getFlops(a) > problem.getFlops(b)
                 : a < b;
    });
    for (size_t i : marked) {
      if (pool.isFull())
        break;
      Marking trial = current;
      trial[i].clear();
      if (!pool.tryAdd(trial))
        continue;
      const StepCost &trialCost = pool.getCandidates().back().cost;
      if (trialCost.peakBytes <= currentCost.peakBytes) {
        current = std::move(trial);
        currentCost = trialCost;
      }
    }
    refined.insert(current);
  }
}

BudgetPlanner::BudgetPlanner(const MarkingProblem &problem,
                             BudgetOptions options)
    : problem(problem), options(options) {
  size_t n = problem.size();
  bool enumerate = n <= options.exactLimit;
  // Beyond the enumeration every measured marking counts against the
  // limit, so that it holds whatever the pool's parts would add.
  size_t limit = enumerate ? std::numeric_limits<size_t>::max()
                           : options.getPoolLimit(problem.getNumFunctionOps());
  CandidatePool pool(problem, candidates, limit);
  pool.tryAdd(Marking(n));
  // The chain program's plans come after the enumeration, whose plans win
  // ties, and before the heuristic pool's.
  if (enumerate) {
    exhaustive = true;
    addEnumeratedPlans(pool, options);
    addChainPlans(pool, options, enumerate);
  } else if (options.heuristicPool) {
    addChainPlans(pool, options, enumerate);
    addHeuristicPlans(pool);
    refineParetoFront(pool);
  } else {
    addChainPlans(pool, options, enumerate);
  }

  unmarkedPeak = candidates.front().cost.peakBytes;
  minPeak = unmarkedPeak;
  for (const MeasuredMarking &point : candidates)
    minPeak = std::min(minPeak, point.cost.peakBytes);
  peakLowerBound = exhaustive ? minPeak : problem.getRelaxationPeakBound();
}

const MeasuredMarking *findCheapestWithin(ArrayRef<MeasuredMarking> points,
                                          int64_t budget) {
  SmallVector<StepCost> costs;
  for (const MeasuredMarking &point : points)
    costs.push_back(point.cost);
  std::optional<size_t> best = findCheapestWithin(costs, budget);
  return best ? &points[*best] : nullptr;
}

/// The best of the relaxation's rows' fractional knapsack bounds: a row
/// with constant C and terms (j, b_j) needs the recomputed ops' b_j to sum
/// to at least sum_j b_j + C - budget, and the cheapest fractional way to
/// get there takes ops by FLOPs per byte. Sets `infeasible` if a row cannot
/// be met at all.
int64_t BudgetPlanner::relaxationBound(int64_t budget, bool &infeasible) const {
  int64_t bound = 0;
  infeasible = false;
  for (const MarkingProblem::RelaxationRow &row : problem.getRelaxation()) {
    int64_t need = row.constant - budget;
    for (auto [index, bytes] : row.terms)
      need += bytes;
    if (need <= 0)
      continue;
    if (row.constant > budget) {
      infeasible = true;
      return 0;
    }
    SmallVector<std::pair<unsigned, int64_t>, 0> terms(row.terms);
    llvm::sort(terms, [&](auto a, auto b) {
      // f_a / b_a < f_b / b_b, as exact products of two 64-bit integers.
      llvm::APInt x =
          llvm::APInt(64, problem.getFlops(a.first), true).sext(128) *
          llvm::APInt(64, b.second, true).sext(128);
      llvm::APInt y =
          llvm::APInt(64, problem.getFlops(b.first), true).sext(128) *
          llvm::APInt(64, a.second, true).sext(128);
      return x != y ? x.slt(y) : a.first < b.first;
    });
    double flops = 0;
    for (auto [index, bytes] : terms) {
      if (need <= 0)
        break;
      double share = std::min<double>(1.0, double(need) / double(bytes));
      flops += share * problem.getFlops(index);
      need -= bytes;
    }
    // Integral FLOPs: round up, less a rounding error's worth.
    bound = std::max(bound, static_cast<int64_t>(std::ceil(flops - 1e-6)));
  }
  return bound;
}

const BudgetAnswer &BudgetPlanner::answer(int64_t budget) {
  auto [it, inserted] = answers.try_emplace(budget);
  BudgetAnswer &result = it->second;
  if (!inserted)
    return result;
  if (const MeasuredMarking *best = findCheapestWithin(candidates, budget))
    result.best = *best;
  if (exhaustive) {
    result.method = BudgetMethod::Exhaustive;
    result.provenInfeasible = !result.best;
    result.lowerBound = result.best ? result.best->cost.recomputeFlops : 0;
    return result;
  }
  bool infeasible = false;
  result.lowerBound = relaxationBound(budget, infeasible);
  if (infeasible) {
    result.provenInfeasible = true;
    result.note = "the relaxation proves it infeasible";
    return result;
  }
  if (result.best && result.best->cost.recomputeFlops <= result.lowerBound) {
    result.method = BudgetMethod::Bound;
    result.note = "the pool's best meets the relaxation's bound";
    return result;
  }
  if (!hasIlpSolver()) {
    result.note = "built without GLPK: no ILP";
    return result;
  }
  solveIlp(budget, result);
  return result;
}

#ifdef REMAT_HAVE_GLPK

bool hasIlpSolver() { return true; }

namespace {
/// solveIlp's master problem in GLPK, freed on scope exit: a binary column
/// x_j per decision op (1: recomputed) and the FLOPs recomputed as the
/// objective, to minimize.
class IlpMaster {
public:
  explicit IlpMaster(const MarkingProblem &problem)
      : problem(problem), lp(glp_create_prob()) {
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, problem.size());
    for (size_t j = 0; j < problem.size(); ++j) {
      glp_set_col_kind(lp, j + 1, GLP_BV);
      glp_set_obj_coef(lp, j + 1, static_cast<double>(problem.getFlops(j)));
    }
  }
  ~IlpMaster() { glp_delete_prob(lp); }
  IlpMaster(const IlpMaster &) = delete;
  IlpMaster &operator=(const IlpMaster &) = delete;

  /// Adds the relaxation's rows that `budget` does not meet whatever the
  /// marking: the recomputed ops must free at least the excess.
  void addRelaxationRows(int64_t budget) {
    for (const MarkingProblem::RelaxationRow &row : problem.getRelaxation()) {
      int64_t need = row.constant - budget;
      SmallVector<std::pair<unsigned, double>, 0> terms;
      for (auto [index, bytes] : row.terms) {
        need += bytes;
        terms.push_back({index, static_cast<double>(bytes)});
      }
      if (need > 0)
        addRow(terms, GLP_LO, static_cast<double>(need));
    }
  }

  /// Keeps the objective below an incumbent's `flops`.
  void addCutoff(int64_t flops) {
    SmallVector<std::pair<unsigned, double>, 0> objective;
    for (size_t j = 0; j < problem.size(); ++j)
      objective.push_back({unsigned(j), double(problem.getFlops(j))});
    addRow(objective, GLP_UP, double(flops) - 0.5);
  }

  /// The no-good cut of `marking`: at least one x_j differs from it.
  void addNoGood(const Marking &marking) {
    SmallVector<std::pair<unsigned, double>, 0> terms;
    double ones = 0;
    for (size_t j = 0; j < problem.size(); ++j) {
      bool on = !marking[j].empty();
      terms.push_back({unsigned(j), on ? -1.0 : 1.0});
      ones += on;
    }
    addRow(terms, GLP_LO, 1.0 - ones);
  }

  /// Solves the master with presolve within `timeLimitMs`; returns
  /// glp_intopt's error code.
  int solve(int64_t timeLimitMs) {
    glp_iocp parameters;
    glp_init_iocp(&parameters);
    parameters.presolve = GLP_ON;
    parameters.tm_lim = static_cast<int>(timeLimitMs);
    return glp_intopt(lp, &parameters);
  }
  int getStatus() const { return glp_mip_status(lp); }
  double getObjective() const { return glp_mip_obj_val(lp); }

  /// The last solution as a marking: the ops with x_j = 1 in segment 0.
  Marking getSolution() const {
    Marking marking(problem.size());
    for (size_t j = 0; j < problem.size(); ++j)
      if (glp_mip_col_val(lp, j + 1) > 0.5)
        marking[j] = {0};
    return marking;
  }

private:
  /// Adds the row `sum_j value_j x_j` bounded by `bound` from below
  /// (GLP_LO) or above (GLP_UP).
  void addRow(ArrayRef<std::pair<unsigned, double>> terms, int type,
              double bound) {
    int row = glp_add_rows(lp, 1);
    indices.assign(1, 0);
    values.assign(1, 0);
    for (auto [index, value] : terms) {
      indices.push_back(index + 1);
      values.push_back(value);
    }
    glp_set_mat_row(lp, row, terms.size(), indices.data(), values.data());
    glp_set_row_bnds(lp, row, type, type == GLP_LO ? bound : 0.0,
                     type == GLP_UP ? bound : 0.0);
  }

  const MarkingProblem &problem;
  glp_prob *lp;
  /// GLPK's 1-based row buffers, reused.
  SmallVector<int, 0> indices;
  SmallVector<double, 0> values;
};
} // namespace

// The master problem over x_j (1: decision op j recomputed) minimizes
// sum_j flops_j x_j, which is the measured recompute FLOPs of every marking
// that marks only ops it clones, an optimal one among them; any other
// marking measures at most that. Its rows are the relaxation's, the no-good
// cuts of measured markings over budget, and a cutoff below the incumbent.
// Every marking the cuts remove is measured infeasible, so the master's
// optimum never exceeds the optimum: when it is infeasible the incumbent is
// optimal, and when its solution measures within budget that solution is.
void BudgetPlanner::solveIlp(int64_t budget, BudgetAnswer &result) {
  bool search = problem.size() <= options.ilpLimit;
  result.note = search ? "ILP" : "ILP bound only: too many decision ops";
  glp_term_out(GLP_OFF);
  IlpMaster master(problem);
  master.addRelaxationRows(budget);
  if (result.best)
    master.addCutoff(result.best->cost.recomputeFlops);

  auto started = std::chrono::steady_clock::now();
  std::set<Marking> measured;
  for (const MeasuredMarking &point : candidates)
    measured.insert(point.marking);
  while (true) {
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - started)
                       .count();
    if (elapsed >= options.ilpTimeLimitMs) {
      result.note += ", time limit reached";
      return;
    }
    int error = master.solve(options.ilpTimeLimitMs - elapsed);
    int status = master.getStatus();
    if (error == GLP_ENOPFS || error == GLP_ENODFS || status == GLP_NOFEAS) {
      // Nothing cheaper than the incumbent fits: it is optimal, or, without
      // one, the budget is infeasible.
      result.method = BudgetMethod::Ilp;
      result.provenInfeasible = !result.best;
      if (result.best)
        result.lowerBound = result.best->cost.recomputeFlops;
      return;
    }
    if (error != 0 || status != GLP_OPT) {
      result.note +=
          error == GLP_ETMLIM ? ", time limit reached" : ", solver failed";
      return;
    }
    int64_t masterOptimum =
        static_cast<int64_t>(std::ceil(master.getObjective() - 1e-6));
    result.lowerBound = std::max(result.lowerBound, masterOptimum);
    if (!search)
      return;
    if (result.evaluations >= options.ilpMaxEvaluations) {
      result.note += ", evaluation limit reached";
      return;
    }
    Marking marking = master.getSolution();
    StepCost cost = problem.evaluate(marking);
    ++result.evaluations;
    if (measured.insert(marking).second)
      candidates.push_back({marking, cost});
    if (cost.peakBytes <= budget) {
      // Measured FLOPs <= the master's objective <= the optimum.
      result.best = MeasuredMarking{marking, cost};
      result.lowerBound = cost.recomputeFlops;
      result.method = BudgetMethod::Ilp;
      return;
    }
    master.addNoGood(marking);
  }
}

#else

bool hasIlpSolver() { return false; }

void BudgetPlanner::solveIlp(int64_t budget, BudgetAnswer &result) {}

#endif // REMAT_HAVE_GLPK

} // namespace remat
