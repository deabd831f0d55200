//===- CheckpointPlan.cpp - What -remat-checkpoint will do ----------------===//
//
// This file implements the checkpoint plan: the classification of segment
// ops, the placement of clones and barriers in the backward region at every
// nesting level, and the resulting set of saved values.
//
//===----------------------------------------------------------------------===//

#include "remat/Analysis/CheckpointPlan.h"

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVectorExtras.h"

#include <map>
#include <numeric>
#include <tuple>

using namespace mlir;

namespace remat {

//===----------------------------------------------------------------------===//
// Clonability
//===----------------------------------------------------------------------===//

static std::string describeEffect(const MemoryEffects::EffectInstance &effect) {
  StringRef kind = "an effect";
  if (isa<MemoryEffects::Read>(effect.getEffect()))
    kind = "a read effect";
  else if (isa<MemoryEffects::Write>(effect.getEffect()))
    kind = "a write effect";
  else if (isa<MemoryEffects::Allocate>(effect.getEffect()))
    kind = "an allocate effect";
  else if (isa<MemoryEffects::Free>(effect.getEffect()))
    kind = "a free effect";
  return ("it has " + kind + " on '" + effect.getResource()->getName() + "'")
      .str();
}

std::string getUnclonableReason(Operation *op) {
  if (!op->isRegistered())
    return "it is unregistered, so its side effects are unknown";
  if (op->getNumSuccessors() != 0)
    return "it transfers control";
  if (isMemoryEffectFree(op))
    return {};

  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    if (!instances.empty())
      return describeEffect(instances.front());
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return "it does not declare its memory effects";
  }

  // The effects come from the ops in its regions.
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block) {
        std::string reason = getUnclonableReason(&nested);
        if (!reason.empty())
          return ("its region holds '" + nested.getName().getStringRef() +
                  "' and " + reason)
              .str();
      }
  return "it has memory effects";
}

//===----------------------------------------------------------------------===//
// CheckpointPlanner
//===----------------------------------------------------------------------===//

/// Builds a CheckpointPlan. Forward ops are numbered in program order and
/// backward top-level ops ("points") likewise, so that no ordering query walks
/// the IR.
class CheckpointPlanner {
public:
  CheckpointPlanner(FunctionOpInterface function,
                    const CheckpointOptions &options, CheckpointPlan &plan)
      : function(function), options(options), plan(plan) {}

  void run();

private:
  struct ForwardInfo {
    unsigned index;
    SmallVector<int64_t, 2> path;
    bool recomputable = false;
  };

  /// A candidate use of a recomputable forward value by a backward op.
  struct Candidate {
    OpOperand *operand;
    Operation *consumer;
  };

  void classifyForwardOps(Block &body, Operation *backward);
  void collectBackwardUses(Block &body, BackwardOp backward,
                           SmallVectorImpl<Candidate> &candidates,
                           llvm::SetVector<Value> &directlySaved);
  unsigned materialize(unsigned level, Operation *original, Operation *point);
  SmallVector<PlannedValue, 4> getSourceOperands(unsigned level,
                                                 Operation *original);
  Operation *getDomainOp(unsigned level, const PlannedValue &value) const;
  unsigned getResultNumber(const PlannedValue &value) const;
  bool isInKey(Operation *op, ArrayRef<int64_t> key) const;
  PlannedValue addBarrierInput(Operation *point, unsigned level,
                               PlannedValue input);
  void assignIds();
  void sortForEmission();
  void computeSavedValues(const llvm::SetVector<Value> &directlySaved);

  const ForwardInfo *getInfo(Operation *op) const {
    auto it = forwardIndex.find(op);
    return it == forwardIndex.end() ? nullptr : &forwardInfos[it->second];
  }
  unsigned getPointIndex(Operation *point) const {
    return pointIndex.lookup(point);
  }

  FunctionOpInterface function;
  const CheckpointOptions &options;
  CheckpointPlan &plan;

  DenseMap<Operation *, unsigned> forwardIndex;
  SmallVector<ForwardInfo, 0> forwardInfos;
  DenseMap<Operation *, unsigned> pointIndex;

  /// Recomputable forward ops by segment key (every prefix of their path),
  /// in program order; the reentrant mode clones a whole key at once.
  std::map<SmallVector<int64_t, 2>, SmallVector<Operation *, 8>> members;

  /// Per level, the clone of each forward op made at that level (one at
  /// most: a clone is reused by every later use).
  SmallVector<DenseMap<Operation *, unsigned>, 2> cloneAt;

  /// The barrier of each (point, level) and the index of each of its inputs.
  DenseMap<std::pair<Operation *, unsigned>, unsigned> barrierOf;
  using InputKey = std::tuple<unsigned, void *, unsigned, unsigned>;
  SmallVector<DenseMap<InputKey, unsigned>, 0> barrierInputIndex;
};

void CheckpointPlanner::classifyForwardOps(Block &body, Operation *backward) {
  for (Operation &op : body) {
    if (&op == backward)
      break;
    unsigned index = forwardInfos.size();
    forwardIndex[&op] = index;
    ForwardInfo &info = forwardInfos.emplace_back();
    info.index = index;
    info.path = getSegmentPath(&op);
    if (info.path.empty() || getPolicy(&op) == Policy::Save)
      continue;
    if (isa<RngUniformOp>(op)) {
      plan.statefulRandom.push_back(&op);
      continue;
    }
    std::string reason = getUnclonableReason(&op);
    if (!reason.empty()) {
      plan.unclonable.push_back({&op, std::move(reason)});
      continue;
    }
    info.recomputable = true;
    for (size_t length = 1; length <= info.path.size(); ++length)
      members[SmallVector<int64_t, 2>(info.path.begin(),
                                      info.path.begin() + length)]
          .push_back(&op);

    // The values a copy must remap: operands, then captures of its regions
    // (a value used in a region of a top-level op and defined outside it
    // lives in the function body).
    SmallVector<Value, 4> &external = plan.externalValues[&op];
    llvm::SmallDenseSet<Value, 8> seen;
    for (Value operand : op.getOperands())
      if (seen.insert(operand).second)
        external.push_back(operand);
    op.walk([&](Operation *nested) {
      if (nested == &op)
        return;
      for (Value operand : nested->getOperands())
        if (operand.getParentBlock() == &body && seen.insert(operand).second)
          external.push_back(operand);
    });
  }
}

void CheckpointPlanner::collectBackwardUses(
    Block &body, BackwardOp backward, SmallVectorImpl<Candidate> &candidates,
    llvm::SetVector<Value> &directlySaved) {
  unsigned index = 0;
  for (Operation &point : backward.getBody().front()) {
    pointIndex[&point] = index++;
    // Barriers and clones of an earlier run read saved values on purpose;
    // leaving them alone makes the transform idempotent.
    bool isConsumer = !isa<BarrierOp>(point) &&
                      !point.hasAttr(RematDialect::kCloneOfAttrName);
    point.walk([&](Operation *inner) {
      for (OpOperand &operand : inner->getOpOperands()) {
        Value value = operand.get();
        if (value.getParentBlock() != &body)
          continue;
        const ForwardInfo *info =
            value.getDefiningOp() ? getInfo(value.getDefiningOp()) : nullptr;
        if (isConsumer && info && info->recomputable)
          candidates.push_back({&operand, &point});
        else
          directlySaved.insert(value);
      }
    });
  }
}

bool CheckpointPlanner::isInKey(Operation *op, ArrayRef<int64_t> key) const {
  const ForwardInfo *info = getInfo(op);
  return info && info->recomputable && info->path.size() >= key.size() &&
         ArrayRef<int64_t>(info->path).take_front(key.size()) == key;
}

/// The values a level-`level` clone of `original` reads, before remapping:
/// the forward op's own external values at level 0, otherwise the sources of
/// the level-(`level` - 1) clone it recomputes.
SmallVector<PlannedValue, 4>
CheckpointPlanner::getSourceOperands(unsigned level, Operation *original) {
  if (level == 0)
    return llvm::map_to_vector<4>(
        plan.getExternalValues(original),
        [](Value value) { return PlannedValue::forward(value); });
  return plan.clones[cloneAt[level - 1].lookup(original)].sources;
}

/// Returns the forward op whose recomputation `value` stands for at `level`,
/// or null if it stands for no recomputable op.
Operation *CheckpointPlanner::getDomainOp(unsigned level,
                                          const PlannedValue &value) const {
  if (level == 0) {
    if (value.kind != PlannedValue::Kind::Forward)
      return nullptr;
    Operation *def = value.value.getDefiningOp();
    const ForwardInfo *info = def ? getInfo(def) : nullptr;
    return info && info->recomputable ? def : nullptr;
  }
  if (value.kind != PlannedValue::Kind::Clone)
    return nullptr;
  return plan.clones[value.index].original;
}

unsigned CheckpointPlanner::getResultNumber(const PlannedValue &value) const {
  if (value.kind == PlannedValue::Kind::Forward)
    return cast<OpResult>(value.value).getResultNumber();
  return value.number;
}

PlannedValue CheckpointPlanner::addBarrierInput(Operation *point,
                                                unsigned level,
                                                PlannedValue input) {
  // Read the saved value itself, not an earlier barrier's copy of it, so that
  // the earlier barrier's results die at their own point.
  if (input.kind == PlannedValue::Kind::Barrier)
    input = plan.barriers[input.index].inputs[input.number];

  auto [it, inserted] =
      barrierOf.try_emplace({point, level}, plan.barriers.size());
  if (inserted) {
    plan.barriers.push_back({point, level, {}});
    barrierInputIndex.emplace_back();
  }
  unsigned barrier = it->second;
  InputKey key{static_cast<unsigned>(input.kind),
               input.value.getAsOpaquePointer(), input.index, input.number};
  auto [inputIt, newInput] = barrierInputIndex[barrier].try_emplace(
      key, plan.barriers[barrier].inputs.size());
  if (newInput)
    plan.barriers[barrier].inputs.push_back(input);
  return PlannedValue::barrier(barrier, inputIt->second);
}

/// Makes the level-`level` clone of `original` available before `point` and
/// returns its index: reuses it if it exists, otherwise clones the backward
/// slice of `original` in its level-`level` segment (or the whole segment
/// without early stop) that has no clone at this level yet.
unsigned CheckpointPlanner::materialize(unsigned level, Operation *original,
                                        Operation *point) {
  if (cloneAt.size() <= level)
    cloneAt.resize(level + 1);
  if (auto it = cloneAt[level].find(original); it != cloneAt[level].end())
    return it->second;

  SmallVector<int64_t, 2> key(
      ArrayRef<int64_t>(getInfo(original)->path).take_front(level + 1));
  auto inSegment = [&](Operation *op) { return op && isInKey(op, key); };

  SmallVector<Operation *, 8> slice;
  if (options.earlyStop) {
    llvm::SmallPtrSet<Operation *, 8> visited{original};
    SmallVector<Operation *, 8> stack{original};
    while (!stack.empty()) {
      Operation *op = stack.pop_back_val();
      slice.push_back(op);
      for (const PlannedValue &source : getSourceOperands(level, op)) {
        Operation *def = getDomainOp(level, source);
        if (inSegment(def) && !cloneAt[level].count(def) &&
            visited.insert(def).second)
          stack.push_back(def);
      }
    }
    llvm::sort(slice, [&](Operation *a, Operation *b) {
      return getInfo(a)->index < getInfo(b)->index;
    });
  } else {
    for (Operation *op : members[key])
      if (!cloneAt[level].count(op) &&
          (level == 0 || cloneAt[level - 1].count(op)))
        slice.push_back(op);
  }

  for (Operation *op : slice) {
    PlannedClone clone{op, point, level, /*id=*/0, {}};
    for (const PlannedValue &source : getSourceOperands(level, op)) {
      Operation *def = getDomainOp(level, source);
      if (inSegment(def)) {
        assert(cloneAt[level].count(def) && "slice is not closed");
        clone.sources.push_back(PlannedValue::clone(cloneAt[level].lookup(def),
                                                    getResultNumber(source)));
        continue;
      }
      clone.sources.push_back(addBarrierInput(point, level, source));
    }
    cloneAt[level][op] = plan.clones.size();
    plan.clones.push_back(std::move(clone));
  }
  return cloneAt[level].lookup(original);
}

void CheckpointPlanner::assignIds() {
  int64_t nextId = 0;
  function->walk([&](Operation *op) {
    if (auto id = op->getAttrOfType<IntegerAttr>(RematDialect::kIdAttrName))
      nextId = std::max(nextId, id.getInt() + 1);
  });

  llvm::SmallPtrSet<Operation *, 16> seen;
  for (const PlannedClone &clone : plan.clones)
    if (seen.insert(clone.original).second)
      plan.recomputed.push_back(clone.original);
  // Sorting precomputed keys keeps hash lookups out of the comparisons.
  SmallVector<std::pair<unsigned, Operation *>, 0> byIndex =
      llvm::map_to_vector(plan.recomputed, [&](Operation *op) {
        return std::make_pair(getInfo(op)->index, op);
      });
  llvm::sort(byIndex, llvm::less_first());
  for (auto [position, entry] : llvm::enumerate(byIndex))
    plan.recomputed[position] = entry.second;

  DenseMap<Operation *, int64_t> ids;
  for (Operation *op : plan.recomputed) {
    auto id = op->getAttrOfType<IntegerAttr>(RematDialect::kIdAttrName);
    if (op->hasTrait<OpTrait::ConstantLike>())
      ids[op] = -1;
    else
      ids[op] = id ? id.getInt() : nextId++;
  }
  for (PlannedClone &clone : plan.clones)
    clone.id = ids.lookup(clone.original);
}

/// Orders clones by insertion point, then level, then forward program order
/// (a topological order: a clone only reads clones of earlier forward ops of
/// its level), barriers by insertion point and level, and the inputs of each
/// barrier by first use; renumbers the references accordingly.
void CheckpointPlanner::sortForEmission() {
  auto groupOf = [&](Operation *point, unsigned level) {
    return std::make_pair(getPointIndex(point), level);
  };
  // Keys are computed once, so the comparisons do no hash lookups; the
  // index breaks ties, which makes the order deterministic.
  using Key = std::tuple<unsigned, unsigned, unsigned, unsigned>;
  SmallVector<Key, 0> cloneKeys;
  cloneKeys.reserve(plan.clones.size());
  for (auto [index, clone] : llvm::enumerate(plan.clones)) {
    auto [point, level] = groupOf(clone.insertBefore, clone.level);
    cloneKeys.emplace_back(point, level, getInfo(clone.original)->index, index);
  }
  llvm::sort(cloneKeys);
  SmallVector<unsigned, 0> cloneOrder = llvm::map_to_vector(
      cloneKeys, [](const Key &key) { return std::get<3>(key); });
  SmallVector<Key, 0> barrierKeys;
  barrierKeys.reserve(plan.barriers.size());
  for (auto [index, barrier] : llvm::enumerate(plan.barriers)) {
    auto [point, level] = groupOf(barrier.insertBefore, barrier.level);
    barrierKeys.emplace_back(point, level, 0, index);
  }
  llvm::sort(barrierKeys);
  SmallVector<unsigned, 0> barrierOrder = llvm::map_to_vector(
      barrierKeys, [](const Key &key) { return std::get<3>(key); });

  SmallVector<unsigned, 0> newClone(plan.clones.size());
  for (auto [position, old] : llvm::enumerate(cloneOrder))
    newClone[old] = position;
  SmallVector<unsigned, 0> newBarrier(plan.barriers.size());
  for (auto [position, old] : llvm::enumerate(barrierOrder))
    newBarrier[old] = position;

  // Every barrier input has a reader among its group's clones.
  SmallVector<SmallVector<unsigned, 4>, 0> newInput(plan.barriers.size());
  SmallVector<unsigned, 0> numInputs(plan.barriers.size(), 0);
  for (auto [index, barrier] : llvm::enumerate(plan.barriers))
    newInput[index].assign(barrier.inputs.size(), ~0u);
  for (unsigned old : cloneOrder)
    for (const PlannedValue &source : plan.clones[old].sources)
      if (source.kind == PlannedValue::Kind::Barrier &&
          newInput[source.index][source.number] == ~0u)
        newInput[source.index][source.number] = numInputs[source.index]++;

  auto renumber = [&](PlannedValue &value) {
    if (value.kind == PlannedValue::Kind::Clone) {
      value.index = newClone[value.index];
    } else if (value.kind == PlannedValue::Kind::Barrier) {
      value.number = newInput[value.index][value.number];
      value.index = newBarrier[value.index];
    }
  };

  SmallVector<PlannedClone, 0> clones;
  clones.reserve(plan.clones.size());
  for (unsigned old : cloneOrder) {
    clones.push_back(std::move(plan.clones[old]));
    llvm::for_each(clones.back().sources, renumber);
  }
  SmallVector<PlannedBarrier, 0> barriers;
  barriers.reserve(plan.barriers.size());
  for (unsigned old : barrierOrder) {
    PlannedBarrier &barrier = barriers.emplace_back();
    barrier.insertBefore = plan.barriers[old].insertBefore;
    barrier.level = plan.barriers[old].level;
    barrier.inputs.resize(plan.barriers[old].inputs.size());
    for (auto [number, input] : llvm::enumerate(plan.barriers[old].inputs)) {
      PlannedValue renumbered = input;
      renumber(renumbered);
      barrier.inputs[newInput[old][number]] = renumbered;
    }
  }
  plan.clones = std::move(clones);
  plan.barriers = std::move(barriers);
  for (PlannedUse &use : plan.uses)
    renumber(use.value);
}

void CheckpointPlanner::computeSavedValues(
    const llvm::SetVector<Value> &directlySaved) {
  llvm::SetVector<Value> saved(directlySaved.begin(), directlySaved.end());
  for (const PlannedBarrier &barrier : plan.barriers)
    for (const PlannedValue &input : barrier.inputs)
      if (input.kind == PlannedValue::Kind::Forward)
        saved.insert(input.value);

  auto position = [&](Value value) -> std::pair<unsigned, unsigned> {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return {0, arg.getArgNumber()};
    auto result = cast<OpResult>(value);
    return {1 + getInfo(result.getOwner())->index, result.getResultNumber()};
  };
  plan.saved.assign(saved.begin(), saved.end());
  llvm::sort(plan.saved,
             [&](Value a, Value b) { return position(a) < position(b); });
}

void CheckpointPlanner::run() {
  Region &functionBody = function.getFunctionBody();
  BackwardOp backward = getBackwardOp(functionBody);
  if (!backward)
    return;
  plan.backward = backward;
  Block &body = functionBody.front();

  classifyForwardOps(body, backward);
  SmallVector<Candidate, 0> candidates;
  llvm::SetVector<Value> directlySaved;
  collectBackwardUses(body, backward, candidates, directlySaved);

  // Level 0: recompute the outermost segments.
  size_t maxDepth = 0;
  for (const Candidate &candidate : candidates) {
    auto result = cast<OpResult>(candidate.operand->get());
    Operation *original = result.getOwner();
    maxDepth = std::max(maxDepth, getInfo(original)->path.size());
    unsigned clone = materialize(0, original, candidate.consumer);
    plan.uses.push_back({candidate.operand, candidate.consumer,
                         PlannedValue::clone(clone, result.getResultNumber())});
  }

  // Level k + 1: a use at a later point of a level-k clone of an op nested
  // deeper than k + 1 gets a recomputation of its inner segment instead.
  for (unsigned level = 1; level < maxDepth; ++level) {
    for (PlannedUse &use : plan.uses) {
      Operation *original = plan.clones[use.value.index].original;
      Operation *point = plan.clones[use.value.index].insertBefore;
      if (plan.clones[use.value.index].level != level - 1 ||
          getInfo(original)->path.size() <= level ||
          getPointIndex(point) >= getPointIndex(use.consumer))
        continue;
      use.value.index = materialize(level, original, use.consumer);
    }
  }

  assignIds();
  sortForEmission();
  computeSavedValues(directlySaved);
}

//===----------------------------------------------------------------------===//
// CheckpointPlan
//===----------------------------------------------------------------------===//

CheckpointPlan CheckpointPlan::compute(FunctionOpInterface function,
                                       const CheckpointOptions &options) {
  CheckpointPlan plan;
  CheckpointPlanner(function, options, plan).run();
  return plan;
}

ArrayRef<Value> CheckpointPlan::getExternalValues(Operation *original) const {
  auto it = externalValues.find(original);
  if (it == externalValues.end())
    return {};
  return it->second;
}

} // namespace remat
