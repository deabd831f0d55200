//===- Schedule.cpp - Reorder a bufferized step for a lower peak ----------===//
//
// This file implements -remat-schedule: the ops of a bufferized step's entry
// block are reordered, within their SSA and memory dependences, so that the
// heap buffers the arena plan places are live for less of the step at once.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/MemoryPlan.h"
#include "remat/Memory/Passes.h"
#include "remat/Memory/Schedule.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "remat-schedule"

namespace remat {
#define GEN_PASS_DEF_REMATSCHEDULEPASS
#include "remat/Memory/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// An op of the entry block that goes right before its first user rather
/// than where a schedule puts it: an allocation, or an op without regions
/// and memory effects (constants, views).
bool isFloating(Operation *op) {
  if (isa<memref::AllocOp, memref::AllocaOp>(op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         !op->hasTrait<OpTrait::IsTerminator>();
}

/// The values `op` and the ops nested in it use, defined outside it.
SetVector<Value> getUsedValues(Operation *op) {
  SetVector<Value> values(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), values);
  return values;
}

/// The scheduling problem of a step's entry block: its items (ops that keep
/// an order), their dependences and the planned buffers they touch.
class StepProblemBuilder {
public:
  StepProblemBuilder(func::FuncOp function)
      : function(function), entry(function.getBody().front()),
        aliases(function) {}

  void build();

  ScheduleProblem problem;
  SmallVector<Operation *> items;
  DenseMap<Operation *, unsigned> itemIndex;

private:
  /// Appends the items `value` depends on: its defining item, or those of
  /// its defining floating op; none for an argument or a value defined
  /// outside the entry block.
  void appendProducers(Value value, SmallVectorImpl<unsigned> &producers);
  /// The items `op` (floating) depends on through its operands.
  ArrayRef<unsigned> getFloatingPredecessors(Operation *op);
  /// The items that use `op`'s results (floating) through floating ops.
  ArrayRef<unsigned> getFloatingUsers(Operation *op);
  void addDependences();
  void addMemoryDependences();
  void addBuffers();

  func::FuncOp function;
  Block &entry;
  BufferViewFlowAnalysis aliases;
  DenseMap<Operation *, SmallVector<unsigned>> floatingPredecessors;
  DenseMap<Operation *, SmallVector<unsigned>> floatingUsers;
};

void StepProblemBuilder::build() {
  for (Operation &op : entry.without_terminator()) {
    if (isFloating(&op))
      continue;
    itemIndex[&op] = problem.addItem();
    items.push_back(&op);
  }
  addDependences();
  addMemoryDependences();
  addBuffers();
  for (auto &predecessors : problem.predecessors) {
    llvm::sort(predecessors);
    predecessors.erase(llvm::unique(predecessors), predecessors.end());
  }
}

void StepProblemBuilder::appendProducers(Value value,
                                         SmallVectorImpl<unsigned> &producers) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &entry)
    return;
  if (auto item = itemIndex.find(def); item != itemIndex.end())
    producers.push_back(item->second);
  else
    llvm::append_range(producers, getFloatingPredecessors(def));
}

ArrayRef<unsigned> StepProblemBuilder::getFloatingPredecessors(Operation *op) {
  auto it = floatingPredecessors.find(op);
  if (it != floatingPredecessors.end())
    return it->second;
  SmallVector<unsigned> result;
  for (Value value : op->getOperands())
    appendProducers(value, result);
  llvm::sort(result);
  result.erase(llvm::unique(result), result.end());
  return floatingPredecessors[op] = std::move(result);
}

ArrayRef<unsigned> StepProblemBuilder::getFloatingUsers(Operation *op) {
  auto it = floatingUsers.find(op);
  if (it != floatingUsers.end())
    return it->second;
  SmallVector<unsigned> result;
  for (Operation *user : op->getUsers()) {
    Operation *inEntry = entry.findAncestorOpInBlock(*user);
    if (!inEntry)
      continue;
    if (auto item = itemIndex.find(inEntry); item != itemIndex.end())
      result.push_back(item->second);
    else if (isFloating(inEntry))
      llvm::append_range(result, getFloatingUsers(inEntry));
  }
  llvm::sort(result);
  result.erase(llvm::unique(result), result.end());
  return floatingUsers[op] = std::move(result);
}

void StepProblemBuilder::addDependences() {
  for (auto [index, op] : llvm::enumerate(items))
    for (Value value : getUsedValues(op))
      appendProducers(value, problem.predecessors[index]);
}

void StepProblemBuilder::addMemoryDependences() {
  // Roots: the memrefs of the entry level that are no view of another.
  DenseMap<Value, SmallVector<unsigned, 2>> rootsOf;
  unsigned numRoots = 0;
  auto addRoot = [&](Value value) {
    if (!isa<BaseMemRefType>(value.getType()))
      return;
    unsigned root = numRoots++;
    for (Value alias : aliases.resolve(value))
      rootsOf[alias].push_back(root);
  };
  for (BlockArgument argument : entry.getArguments())
    addRoot(argument);
  for (Operation &op : entry)
    if (!isa<ViewLikeOpInterface>(op))
      for (Value result : op.getResults())
        addRoot(result);
  // One more root stands for all memory: an op whose effects are unknown,
  // or not on a value, writes it, and every other access reads it.
  unsigned everything = numRoots++;

  struct RootState {
    int64_t lastWrite = -1;
    SmallVector<unsigned> reads;
  };
  SmallVector<RootState> roots(numRoots);
  for (unsigned index = 0, e = items.size(); index < e; ++index) {
    Operation *op = items[index];
    // Each root this item reads or writes (true: writes).
    llvm::MapVector<unsigned, bool> accesses;
    auto access = [&](unsigned root, bool write) { accesses[root] |= write; };
    auto accessValue = [&](Value value, bool write) {
      auto it = rootsOf.find(value);
      if (it != rootsOf.end()) {
        for (unsigned root : it->second)
          access(root, write);
        return;
      }
      // A value defined inside the item is its own business.
      if (op->isAncestor(value.getParentBlock()->getParentOp()))
        return;
      access(everything, true);
    };
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    if (!effects) {
      access(everything, true);
      for (Value value : getUsedValues(op))
        if (isa<BaseMemRefType>(value.getType()))
          accessValue(value, true);
    } else {
      for (const MemoryEffects::EffectInstance &effect : *effects) {
        bool write = !isa<MemoryEffects::Read>(effect.getEffect());
        if (Value value = effect.getValue())
          accessValue(value, write);
        else
          access(everything, true);
      }
    }
    if (accesses.empty())
      continue;
    if (!accesses.count(everything))
      access(everything, false);
    for (auto [root, write] : accesses) {
      RootState &state = roots[root];
      if (state.lastWrite >= 0)
        problem.predecessors[index].push_back(state.lastWrite);
      if (!write) {
        state.reads.push_back(index);
        continue;
      }
      llvm::append_range(problem.predecessors[index], state.reads);
      state.reads.clear();
      state.lastWrite = index;
    }
    llvm::erase(problem.predecessors[index], unsigned(index));
  }
}

void StepProblemBuilder::addBuffers() {
  StepBuffers buffers =
      collectStepBuffers(function, mustKeepReturnedBuffers(function));
  DenseMap<Operation *, unsigned> bufferOf;
  for (auto [alloc, lifetime, escapes] :
       llvm::zip(buffers.allocs, buffers.lifetimes, buffers.escapes)) {
    unsigned buffer =
        problem.addBuffer(roundToArenaAlignment(lifetime.bytes), escapes);
    bufferOf[alloc] = buffer;
    SetVector<unsigned> users;
    for (Value alias : aliases.resolve(alloc.getResult()))
      for (Operation *user : alias.getUsers()) {
        if (isa<memref::DeallocOp>(user))
          continue;
        Operation *inEntry = entry.findAncestorOpInBlock(*user);
        if (auto item = itemIndex.find(inEntry); item != itemIndex.end())
          users.insert(item->second);
        else if (inEntry && isFloating(inEntry))
          for (unsigned item : getFloatingUsers(inEntry))
            users.insert(item);
      }
    for (unsigned user : users)
      problem.touches[user].push_back(buffer);
  }
  // In-place reuse, as -remat-reuse-buffers will do it in the order chosen.
  for (auto [index, op] : llvm::enumerate(items)) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      continue;
    SmallVector<memref::AllocOp> sources;
    memref::AllocOp result = getReusableOperands(generic, entry, sources);
    auto resultBuffer = result ? bufferOf.find(result) : bufferOf.end();
    if (resultBuffer == bufferOf.end())
      continue;
    ScheduleProblem::Reuse reuse{
        static_cast<unsigned>(index), resultBuffer->second, {}};
    for (memref::AllocOp source : sources)
      if (auto it = bufferOf.find(source);
          it != bufferOf.end() &&
          problem.bytes[it->second] == problem.bytes[reuse.result])
        reuse.sources.push_back(it->second);
    if (!reuse.sources.empty())
      problem.reuses.push_back(std::move(reuse));
  }
}

/// Moves every item of `order` that frees a buffer right after the last
/// item it depends on, so that buffers are freed as soon as they can be.
void freeEarly(const ScheduleProblem &problem, ArrayRef<Operation *> items,
               SmallVectorImpl<unsigned> &order) {
  SmallVector<unsigned> frees, rest;
  for (unsigned item : order)
    (isa<memref::DeallocOp>(items[item]) ? frees : rest).push_back(item);
  // The frees to place after each item of `rest` (slot i + 1 after rest[i],
  // slot 0 first), in their order: after the items and frees they depend
  // on.
  SmallVector<unsigned> slot(items.size(), 0);
  for (auto [index, item] : llvm::enumerate(rest))
    slot[item] = index + 1;
  SmallVector<SmallVector<unsigned>> after(rest.size() + 1);
  for (unsigned free : frees) {
    for (unsigned before : problem.predecessors[free])
      slot[free] = std::max(slot[free], slot[before]);
    after[slot[free]].push_back(free);
  }
  order.assign(after[0].begin(), after[0].end());
  for (auto [index, item] : llvm::enumerate(rest)) {
    order.push_back(item);
    llvm::append_range(order, after[index + 1]);
  }
}

/// The entry block's ops in `order`, each floating op right before its
/// first user, the terminator last.
SmallVector<Operation *> getOps(Block &entry, ArrayRef<Operation *> items,
                                ArrayRef<unsigned> order) {
  SmallVector<Operation *> ops;
  DenseSet<Operation *> placed;
  std::function<void(Operation *)> placeOperands = [&](Operation *op) {
    for (Value value : getUsedValues(op)) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != &entry || !isFloating(def) ||
          !placed.insert(def).second)
        continue;
      placeOperands(def);
      ops.push_back(def);
    }
  };
  for (unsigned item : order) {
    placeOperands(items[item]);
    ops.push_back(items[item]);
  }
  placeOperands(entry.getTerminator());
  // Unused floating ops, in their order.
  for (Operation &op : entry.without_terminator())
    if (isFloating(&op) && placed.insert(&op).second) {
      placeOperands(&op);
      ops.push_back(&op);
    }
  return ops;
}

/// The arena `function`'s planned buffers take, after in-place reuse, with
/// its entry block's ops (but the terminator) in the order of `ops`: the
/// peak the rest of -remat-bufferize gives that order. The function is left
/// unchanged.
int64_t getArenaBytesInOrder(func::FuncOp function, ArrayRef<Operation *> ops,
                             bool keepReturned) {
  IRMapping mapping;
  OwningOpRef<func::FuncOp> copy(cast<func::FuncOp>(function->clone(mapping)));
  Block &entry = copy->getBody().front();
  Operation *terminator = entry.getTerminator();
  for (Operation *op : ops)
    mapping.lookup(op)->moveBefore(terminator);
  reuseDyingOperandBuffers(*copy);
  // Orders are compared by their greedy placements; -remat-plan-arena
  // searches the one kept.
  return planArena(collectStepBuffers(*copy, keepReturned).getArenaLifetimes(),
                   /*search=*/false)
      .size;
}

struct RematSchedulePass
    : remat::impl::RematSchedulePassBase<RematSchedulePass> {
  using RematSchedulePassBase::RematSchedulePassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    Region &body = function.getBody();
    if (body.empty() || !body.hasOneBlock())
      return;
    Block &entry = body.front();
    if (entry.empty() || !entry.back().hasTrait<OpTrait::IsTerminator>())
      return;

    StepProblemBuilder builder(function);
    builder.build();
    ScheduleProblem &problem = builder.problem;
    ScheduleOptions options;
    options.maxExactItems = maxExactItems;
    options.searchRounds = searchRounds;
    options.searchTrials = searchTrials;
    SmallVector<unsigned> order = scheduleForPeak(problem, options);
    freeEarly(problem, builder.items, order);
    assert(isValidOrder(problem, order) && "the schedule breaks a dependence");

    LLVM_DEBUG({
      unsigned n = problem.getNumItems();
      auto identity = llvm::to_vector(llvm::seq<unsigned>(0, n));
      llvm::dbgs() << "remat-schedule @" << function.getName() << ": " << n
                   << " items, " << problem.bytes.size() << " buffers, peak "
                   << getSchedulePeak(problem, identity) << " -> "
                   << getSchedulePeak(problem, order) << "\n";
    });

    // Keep the new order only if the arena it gives after in-place reuse
    // is smaller than the given order's.
    SmallVector<Operation *> original = llvm::map_to_vector(
        entry.without_terminator(), [](Operation &op) { return &op; });
    SmallVector<Operation *> scheduled = getOps(entry, builder.items, order);
    bool keepReturned = mustKeepReturnedBuffers(function);
    int64_t before = getArenaBytesInOrder(function, original, keepReturned);
    int64_t after = getArenaBytesInOrder(function, scheduled, keepReturned);
    if (after >= before) {
      after = before;
    } else {
      Operation *terminator = entry.getTerminator();
      for (Operation *op : scheduled)
        op->moveBefore(terminator);
    }
    peakBefore += before;
    peakAfter += after;
  }
};

} // namespace
