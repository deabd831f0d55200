//===- MemoryProfile.cpp - Saved activations and static peak memory -------===//
//
// This file implements the memory profile of a training step: saved values,
// storage sharing between values, live intervals and their peak.
//
//===----------------------------------------------------------------------===//

#include "remat/Planning/MemoryProfile.h"
#include "remat/Analysis/CostModel.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace remat;

namespace {

/// Storage of a group of values that share one buffer.
struct Storage {
  int64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
  bool counted = false;
};

/// Returns true if `value` is a linalg.fill of a tensor.empty used only as
/// the destination of other ops: lowering re-creates such an init right
/// before each writer (-remat-split-shared-inits), so it has no storage of
/// its own.
bool isFreshInitOnly(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return false;
  return llvm::all_of(value.getUses(), [](OpOperand &use) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
    return dps && dps.isDpsInit(&use);
  });
}

/// Returns true if elementwise fusion computes `value` inside its only user,
/// so it never exists as a tensor: an elementwise (or counter-based random)
/// op's result whose single use is another elementwise op, which is when
/// linalg's elementwise fusion folds a producer into its consumer.
bool isFusedIntoUser(Value value) {
  Operation *def = value.getDefiningOp();
  return def && value.hasOneUse() &&
         canFuseElementwise(def, *value.user_begin());
}

} // namespace

bool remat::writesIntoOperand(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
         isa<RankedTensorType>(op->getResult(0).getType());
}

bool remat::canFuseElementwise(Operation *producer, Operation *consumer) {
  return (producer->hasTrait<OpTrait::Elementwise>() ||
          isa<PhiloxUniformOp>(producer)) &&
         consumer->hasTrait<OpTrait::Elementwise>();
}

bool remat::hasOwnStorage(OpResult result) {
  Operation *op = result.getOwner();
  // Aliases (barriers, reshapes) are counted through their source.
  return isa<ShapedType>(result.getType()) &&
         !isa<arith::ConstantOp, tensor::EmptyOp, BarrierOp,
              tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp,
              tensor::CastOp>(op) &&
         !isFreshInitOnly(result) && !isFusedIntoUser(result);
}

namespace {

/// The storage groups of a step's values: a union-find over value numbers,
/// in arrays rather than per-value nodes, each root with its group's bytes,
/// live interval and whether its storage counts.
class StorageGroups {
public:
  void define(Value value, Storage s) { storage[numberOf(value)] = s; }
  Storage &groupOf(Value value) { return storage[find(numberOf(value))]; }

  /// Puts `from`'s group into `into`'s: the larger bytes, the union of the
  /// intervals.
  void join(Value from, Value into) {
    unsigned a = find(numberOf(from)), b = find(numberOf(into));
    if (a == b)
      return;
    parent[a] = b;
    Storage &merged = storage[b];
    const Storage &other = storage[a];
    merged.bytes = std::max(merged.bytes, other.bytes);
    merged.first = std::min(merged.first, other.first);
    merged.last = std::max(merged.last, other.last);
    merged.counted = merged.counted || other.counted;
  }

  /// Calls `fn` on the storage of every group.
  template <typename Fn> void forEachGroup(Fn fn) const {
    for (auto [index, s] : llvm::enumerate(storage))
      if (parent[index] == index)
        fn(s);
  }

private:
  unsigned find(unsigned index) {
    while (parent[index] != index) {
      parent[index] = parent[parent[index]];
      index = parent[index];
    }
    return index;
  }
  unsigned numberOf(Value value) {
    auto [it, inserted] = numbers.try_emplace(value, parent.size());
    if (inserted) {
      parent.push_back(it->second);
      storage.emplace_back();
    }
    return it->second;
  }

  DenseMap<Value, unsigned> numbers;
  SmallVector<unsigned, 0> parent;
  SmallVector<Storage, 0> storage;
};

/// The schedule of a step (its forward ops, the backward region's ops in
/// place of the backward op) and each op's position in it.
class StepSchedule {
public:
  StepSchedule(Block &body, BackwardOp backward,
               SmallVectorImpl<Operation *> &schedule)
      : schedule(schedule) {
    for (Operation &op : body) {
      if (&op == backward.getOperation()) {
        for (Operation &inner : backward.getBody().front())
          add(&inner);
        continue;
      }
      add(&op);
    }
  }

  /// The position of `op` or of its ancestor in the schedule.
  int64_t positionOf(Operation *op) const {
    for (;; op = op->getParentOp())
      if (auto it = position.find(op); it != position.end())
        return it->second;
  }
  /// The last position that uses `value`, defined at `def`.
  int64_t lastUse(Value value, int64_t def) const {
    int64_t last = def;
    for (Operation *user : value.getUsers())
      last = std::max(last, positionOf(user));
    return last;
  }
  int64_t end() const { return schedule.size() - 1; }

private:
  void add(Operation *op) {
    position[op] = schedule.size();
    schedule.push_back(op);
  }

  SmallVectorImpl<Operation *> &schedule;
  DenseMap<Operation *, int64_t> position;
};

/// Joins the storage of `op`'s results with what they share: a barrier's or
/// a reshape's source, an operand an elementwise op writes into, or the
/// init a destination-style op writes in place; `at` is `op`'s position.
void shareStorage(Operation *op, int64_t at, StorageGroups &groups) {
  if (isa<BarrierOp>(op)) {
    for (auto [in, out] : llvm::zip(op->getOperands(), op->getResults()))
      groups.join(out, in);
  } else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                 tensor::ReshapeOp, tensor::CastOp>(op)) {
    groups.join(op->getResult(0), op->getOperand(0));
  } else if (writesIntoOperand(op)) {
    for (Value operand : op->getOperands()) {
      const Storage &src = groups.groupOf(operand);
      if (operand.getType() == op->getResult(0).getType() && src.counted &&
          src.last == at) {
        groups.join(op->getResult(0), operand);
        break;
      }
    }
  } else if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      Value source = init.get();
      if (!isa<RankedTensorType>(source.getType()))
        continue;
      const Storage &src = groups.groupOf(source);
      bool dies = src.last == at;
      bool fresh =
          source.getDefiningOp<tensor::EmptyOp>() || isFreshInitOnly(source);
      // Written in place: the result takes over the init's buffer, or the
      // buffer it is about to get if the init is a tensor.empty.
      if (dies && !fresh && src.counted)
        groups.join(dps.getTiedOpResult(&init), source);
    }
  }
}

/// The live bytes at each position of `profile`'s schedule, and their peak,
/// from the counted groups' intervals.
void sweepLiveBytes(const StorageGroups &groups, MemoryProfile &profile) {
  SmallVector<int64_t> delta(profile.schedule.size() + 1, 0);
  groups.forEachGroup([&](const Storage &s) {
    if (!s.counted || s.bytes == 0)
      return;
    delta[s.first] += s.bytes;
    delta[s.last + 1] -= s.bytes;
  });
  int64_t live = 0;
  profile.liveBytes.reserve(profile.schedule.size());
  for (auto [index, op] : llvm::enumerate(profile.schedule)) {
    live += delta[index];
    profile.liveBytes.push_back(live);
    if (live > profile.peakBytes) {
      profile.peakBytes = live;
      profile.peakOp = op;
    }
  }
}

/// The saved values, forward values used inside the backward region, in
/// `profile`: by definition, ties (results of one op, arguments) in
/// first-use order.
void collectSavedValues(BackwardOp backward, const StepSchedule &schedule,
                        MemoryProfile &profile) {
  llvm::SetVector<Value> saved = getSavedValues(backward);
  auto defPosition = [&](Value value) -> int64_t {
    if (isa<BlockArgument>(value))
      return -1;
    return schedule.positionOf(value.getDefiningOp());
  };
  SmallVector<std::tuple<int64_t, size_t, Value>> ordered;
  for (auto [index, value] : llvm::enumerate(saved))
    ordered.emplace_back(defPosition(value), index, value);
  llvm::sort(ordered, [](const auto &a, const auto &b) {
    return std::make_pair(std::get<0>(a), std::get<1>(a)) <
           std::make_pair(std::get<0>(b), std::get<1>(b));
  });
  for (const auto &[def, index, value] : ordered) {
    SavedValue entry;
    entry.value = value;
    entry.bytes = getValueBytes(value).value_or(0);
    entry.isArgument = isa<BlockArgument>(value);
    if (Operation *def = value.getDefiningOp())
      entry.segment = getSegmentPath(def);
    (entry.isArgument ? profile.savedArgumentBytes
                      : profile.savedActivationBytes) += entry.bytes;
    profile.saved.push_back(std::move(entry));
  }
}

} // namespace

FailureOr<MemoryProfile>
remat::computeMemoryProfile(FunctionOpInterface function) {
  MemoryProfile profile;
  Region &body = function.getFunctionBody();
  BackwardOp backward = getBackwardOp(body);
  if (!backward)
    return function.emitOpError("has no 'remat.backward' to profile");
  // The verifier of remat.backward keeps a step to one block; callers may
  // profile unverified IR.
  if (!body.hasOneBlock())
    return function.emitOpError(
        "has a body of more than one block; the memory profile needs a "
        "single-block training step");

  StepSchedule schedule(body.front(), backward, profile.schedule);
  StorageGroups groups;
  for (BlockArgument arg : body.getArguments())
    groups.define(arg, {0, 0, schedule.lastUse(arg, 0), false});
  for (auto [index, op] : llvm::enumerate(profile.schedule)) {
    int64_t at = index;
    for (OpResult result : op->getResults()) {
      std::optional<int64_t> bytes = getValueBytes(result);
      if (!bytes)
        return emitUnsizedResultError(result, "the memory profile");
      groups.define(result, {*bytes, at, schedule.lastUse(result, at),
                             hasOwnStorage(result)});
    }
    shareStorage(op, at, groups);
  }
  // The backward op's results are the yielded values.
  int64_t end = schedule.end();
  for (auto [result, yielded] :
       llvm::zip(backward.getResults(), backward.getYield().getOperands())) {
    groups.define(result, {0, end, schedule.lastUse(result, end), false});
    groups.join(result, yielded);
  }

  sweepLiveBytes(groups, profile);
  collectSavedValues(backward, schedule, profile);
  return profile;
}
