//===- MemoryPlan.cpp - One static arena per training step ----------------===//
//
// This file implements the placement of a step's buffers in one arena and
// the collection of those buffers from a bufferized step function.
//
//===----------------------------------------------------------------------===//

#include "remat/Memory/MemoryPlan.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Threading.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace remat;

namespace {

/// A placed buffer: its arena bytes [offset, end).
struct Extent {
  int64_t offset;
  int64_t end;
};

/// Returns the offset of the tightest gap of at least `bytes` between
/// `extents` (sorted by offset), or the end of the highest one.
int64_t findBestFit(ArrayRef<Extent> extents, int64_t bytes) {
  int64_t cursor = 0;
  int64_t best = -1, bestGap = 0;
  for (const Extent &extent : extents) {
    int64_t gap = extent.offset - cursor;
    if (gap >= bytes && (best < 0 || gap < bestGap)) {
      best = cursor;
      bestGap = gap;
    }
    cursor = std::max(cursor, extent.end);
  }
  return best >= 0 ? best : cursor;
}

bool overlapInTime(const BufferLifetime &a, const BufferLifetime &b) {
  return a.first <= b.last && b.first <= a.last;
}

/// Places the buffers order[start..] after order[0..start), which sit at
/// their offsets in `plan` already, each in the tightest gap among the
/// placed buffers it overlaps in time; sets plan.size. Gives up, returning
/// false, once the top reaches `limit`: the placement of a prefix never
/// moves, so the top only grows. O(n^2).
bool placeInOrder(ArrayRef<BufferLifetime> buffers, ArrayRef<size_t> order,
                  size_t start, ArenaPlan &plan,
                  int64_t limit = std::numeric_limits<int64_t>::max()) {
  plan.offsets.resize(buffers.size(), 0);
  plan.size = 0;
  auto extentOf = [&](size_t index) {
    return Extent{plan.offsets[index],
                  plan.offsets[index] +
                      roundToArenaAlignment(buffers[index].bytes)};
  };
  // The placed buffers in order of offset, so that the ones a buffer
  // overlaps in time come out sorted.
  SmallVector<size_t> placed(order.begin(), order.begin() + start);
  for (size_t index : placed)
    plan.size = std::max(plan.size, extentOf(index).end);
  if (plan.size >= limit)
    return false;
  llvm::sort(placed, [&](size_t a, size_t b) {
    return std::make_pair(plan.offsets[a], a) <
           std::make_pair(plan.offsets[b], b);
  });
  SmallVector<Extent> extents;
  for (size_t index : order.drop_front(start)) {
    const BufferLifetime &buffer = buffers[index];
    int64_t bytes = roundToArenaAlignment(buffer.bytes);
    extents.clear();
    for (size_t other : placed)
      if (overlapInTime(buffer, buffers[other]))
        extents.push_back(extentOf(other));
    int64_t offset = findBestFit(extents, bytes);
    plan.offsets[index] = offset;
    plan.size = std::max(plan.size, offset + bytes);
    if (plan.size >= limit)
      return false;
    auto *it = llvm::partition_point(placed, [&](size_t other) {
      return std::make_pair(plan.offsets[other], other) <
             std::make_pair(offset, index);
    });
    placed.insert(it, index);
  }
  return true;
}

/// The orders placeInOrder tries: decreasing size (TFLite's and XLA's heap
/// simulators), decreasing lifetime length, and decreasing area (bytes
/// times length), ties by first position.
SmallVector<SmallVector<size_t>>
getPlacementOrders(ArrayRef<BufferLifetime> buffers) {
  auto length = [&](size_t i) { return buffers[i].last - buffers[i].first; };
  using Key = std::function<std::tuple<int64_t, int64_t, int64_t>(size_t)>;
  SmallVector<Key> keys = {
      [&](size_t i) {
        return std::make_tuple(-buffers[i].bytes, -length(i), buffers[i].first);
      },
      [&](size_t i) {
        return std::make_tuple(-length(i), -buffers[i].bytes, buffers[i].first);
      },
      [&](size_t i) {
        return std::make_tuple(-buffers[i].bytes * (length(i) + 1),
                               -buffers[i].bytes, buffers[i].first);
      },
      // Decreasing size again, equal sizes in order of first or (reversed)
      // last position: a step has many buffers of one size, and which of
      // them goes first decides the packing.
      [&](size_t i) {
        return std::make_tuple(-buffers[i].bytes, buffers[i].first, int64_t(0));
      },
      [&](size_t i) {
        return std::make_tuple(-buffers[i].bytes, -buffers[i].last, int64_t(0));
      }};
  SmallVector<SmallVector<size_t>> orders;
  for (const Key &key : keys) {
    auto order = llvm::to_vector(llvm::seq<size_t>(0, buffers.size()));
    llvm::sort(order, [&](size_t a, size_t b) {
      return std::make_pair(key(a), a) < std::make_pair(key(b), b);
    });
    orders.push_back(std::move(order));
  }
  return orders;
}

/// The buffers in order of first position, larger first among equals: an
/// allocator's order.
SmallVector<size_t> getStartOrder(ArrayRef<BufferLifetime> buffers) {
  auto order = llvm::to_vector(llvm::seq<size_t>(0, buffers.size()));
  llvm::sort(order, [&](size_t a, size_t b) {
    return std::make_tuple(buffers[a].first, -buffers[a].bytes, a) <
           std::make_tuple(buffers[b].first, -buffers[b].bytes, b);
  });
  return order;
}

/// Places buffers in order of first position, each against the buffers
/// still live there. O(n k) for k buffers live at once.
ArenaPlan placeByStart(ArrayRef<BufferLifetime> buffers) {
  SmallVector<size_t> order = getStartOrder(buffers);
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  // The live buffers' extents and last positions, sorted by offset.
  SmallVector<std::pair<Extent, int64_t>> active;
  SmallVector<Extent> extents;
  for (size_t index : order) {
    const BufferLifetime &buffer = buffers[index];
    llvm::erase_if(
        active, [&](const auto &entry) { return entry.second < buffer.first; });
    extents.clear();
    for (const auto &entry : active)
      extents.push_back(entry.first);
    int64_t bytes = roundToArenaAlignment(buffer.bytes);
    int64_t offset = findBestFit(extents, bytes);
    plan.offsets[index] = offset;
    plan.size = std::max(plan.size, offset + bytes);
    auto *it = llvm::partition_point(
        active, [&](const auto &entry) { return entry.first.offset < offset; });
    active.insert(it, {Extent{offset, offset + bytes}, buffer.last});
  }
  return plan;
}

} // namespace

int64_t remat::roundToArenaAlignment(int64_t bytes) {
  return llvm::alignTo(std::max<int64_t>(bytes, 0), kArenaAlignment);
}

int64_t remat::getMaxLiveBytes(ArrayRef<BufferLifetime> buffers) {
  SmallVector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * buffers.size());
  for (const BufferLifetime &buffer : buffers) {
    int64_t bytes = roundToArenaAlignment(buffer.bytes);
    events.push_back({buffer.first, bytes});
    events.push_back({buffer.last + 1, -bytes});
  }
  // At one position, frees (negative) come before allocations.
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [position, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

namespace {

/// Improves `plan`, the placement of `buffers` in `order`, by moving one
/// buffer of the order to an earlier place: the second before the first,
/// then the third before the first or the second, ... keeping for each
/// buffer the first move that lowers the top, sweep after sweep while one
/// does, for at most `evaluations` placements or until the top is `floor`.
/// Greedy placements hang on small details of their order (which of equal
/// sizes goes first, a few more ops that change every lifetime's length),
/// and a buffer that only fits where another, placed earlier, sits (a
/// long-lived activation under the short-lived padded copies that the
/// larger sizes put first) gets its place this way. A swap of neighbours is
/// the move of one place.
void searchMovesEarlier(ArrayRef<BufferLifetime> buffers,
                        SmallVectorImpl<size_t> &order, ArenaPlan &plan,
                        unsigned evaluations, int64_t floor) {
  SmallVector<size_t> trial;
  ArenaPlan candidate;
  bool lowered = true;
  while (lowered) {
    lowered = false;
    for (size_t i = 1; i < order.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (evaluations == 0 || plan.size <= floor)
          return;
        --evaluations;
        trial.assign(order.begin(), order.end());
        std::rotate(trial.begin() + j, trial.begin() + i,
                    trial.begin() + i + 1);
        // order[0..j) keeps its places; a trial that reaches the top
        // cannot lower it.
        candidate.offsets.assign(plan.offsets.begin(), plan.offsets.end());
        if (placeInOrder(buffers, trial, j, candidate, plan.size)) {
          std::swap(plan, candidate);
          order.swap(trial);
          lowered = true;
          break;
        }
      }
    }
  }
}

} // namespace

ArenaPlan remat::planArena(ArrayRef<BufferLifetime> buffers, bool search) {
  ArenaPlan plan = placeByStart(buffers);
  int64_t maxLive = getMaxLiveBytes(buffers);
  if (buffers.size() <= kMaxBySizeBuffers) {
    // The order placeByStart places in, then the others.
    SmallVector<SmallVector<size_t>> orders;
    orders.push_back(getStartOrder(buffers));
    llvm::append_range(orders, getPlacementOrders(buffers));
    SmallVector<size_t> bestOrder = orders.front();
    ArenaPlan candidate;
    for (ArrayRef<size_t> order : llvm::drop_begin(orders)) {
      if (placeInOrder(buffers, order, /*start=*/0, candidate, plan.size)) {
        std::swap(plan, candidate);
        bestOrder.assign(order.begin(), order.end());
      }
    }
    // Placements of the best order with one buffer moved earlier, each
    // O(n^2): about 2^26 buffer pairs compared in all, from 16 to
    // 1024 placements.
    size_t n = std::max<size_t>(buffers.size(), 1);
    unsigned evaluations = static_cast<unsigned>(
        std::clamp<size_t>((size_t(1) << 26) / (n * n), 16, 1024));
    if (search)
      searchMovesEarlier(buffers, bestOrder, plan, evaluations, maxLive);
  }
  plan.maxLiveBytes = maxLive;
  return plan;
}

//===----------------------------------------------------------------------===//
// The buffers of a step
//===----------------------------------------------------------------------===//

namespace {

/// Returns the rounded bytes of a static memref of known element size.
std::optional<int64_t> getBufferBytes(MemRefType type) {
  std::optional<int64_t> bytes = getTypeBytes(type);
  if (!bytes)
    return std::nullopt;
  return roundToArenaAlignment(*bytes);
}

/// Returns true if `type` can be a view at an offset of a byte arena.
bool isPlannable(MemRefType type) {
  return getBufferBytes(type) && type.getLayout().isIdentity() &&
         !type.getMemorySpace();
}

} // namespace

bool remat::mustKeepReturnedBuffers(func::FuncOp function) {
  Operation *table = SymbolTable::getNearestSymbolTable(function);
  return function.isPrivate() ||
         (table && !SymbolTable::symbolKnownUseEmpty(function, table));
}

/// The rounded bytes of the memref iter_args of the loops nested in `op`
/// (or `op` itself) that a loop does not yield back unchanged.
static int64_t getCarriedBytes(Operation &op) {
  int64_t bytes = 0;
  op.walk([&](LoopLikeOpInterface loop) {
    ValueRange yielded = loop.getYieldedValues();
    for (auto [index, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || (index < yielded.size() && yielded[index] == arg))
        continue;
      bytes += getBufferBytes(type).value_or(0);
    }
  });
  return bytes;
}

/// The StepBuffers of a function whose allocations are all left to the
/// allocator: each one's bytes live at once, with the largest loop carry.
static StepBuffers leaveAllUnplanned(func::FuncOp function) {
  StepBuffers result;
  function.walk([&](memref::AllocOp alloc) {
    result.unplanned.push_back(alloc);
    result.unplannedBytes += getBufferBytes(alloc.getType()).value_or(0);
  });
  for (Block &block : function.getBody())
    for (Operation &op : block)
      result.carriedBytes = std::max(result.carriedBytes, getCarriedBytes(op));
  result.unplannedPeakBytes = result.unplannedBytes + result.carriedBytes;
  return result;
}

namespace {
/// How an allocation of a one-block function is used, by the positions of
/// the entry block's ops (`end` the last).
struct AllocUse {
  /// From the op that holds the allocation to the last use of any of its
  /// views (`end` if it is returned).
  BufferLifetime lifetime;
  /// Whether the arena can hold it: a static, plannable allocation at the
  /// entry level whose views are used only there, freed by nothing but its
  /// own deallocation, and not returned when `keepReturned`.
  bool planned = false;
  /// Whether it is returned.
  bool escapes = false;
  /// Where it is freed at the latest, its deallocations included: the end
  /// of its span if it is left to the allocator.
  int64_t freed = 0;
};
} // namespace

/// The AllocUse of `alloc` in the function whose entry block is `entry`.
static AllocUse analyzeAlloc(memref::AllocOp alloc, Block &entry,
                             const DenseMap<Operation *, int64_t> &position,
                             int64_t end, const BufferViewFlowAnalysis &aliases,
                             bool keepReturned) {
  MemRefType type = alloc.getType();
  AllocUse use;
  use.lifetime =
      BufferLifetime{getBufferBytes(type).value_or(0),
                     position.lookup(entry.findAncestorOpInBlock(*alloc)), 0};
  use.planned = alloc->getBlock() == &entry && isPlannable(type) &&
                alloc.getDynamicSizes().empty() &&
                alloc.getSymbolOperands().empty();
  BufferLifetime &lifetime = use.lifetime;
  lifetime.last = lifetime.first;
  use.freed = lifetime.first;
  for (Value alias : aliases.resolve(alloc.getResult())) {
    for (Operation *user : alias.getUsers()) {
      Operation *inEntry = entry.findAncestorOpInBlock(*user);
      if (!inEntry) {
        use.planned = false;
        use.freed = end;
        continue;
      }
      use.freed = std::max(use.freed, position.lookup(inEntry));
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        // Only the allocation's own deallocation at the entry level.
        if (dealloc.getMemref() != alloc.getResult() || inEntry != user)
          use.planned = false;
        continue;
      }
      if (user->hasTrait<OpTrait::ReturnLike>() && inEntry == user) {
        use.planned = use.planned && !keepReturned;
        use.escapes = true;
        lifetime.last = end;
        use.freed = end;
      }
      lifetime.last = std::max(lifetime.last, position.lookup(inEntry));
    }
  }
  return use;
}

SmallVector<BufferLifetime> StepBuffers::getArenaLifetimes() const {
  SmallVector<BufferLifetime> result(lifetimes);
  for (const LoopArena &loopArena : loopArenas)
    result.push_back(loopArena.lifetime);
  return result;
}

/// The loop arena of `loop` (see StepBuffers::LoopArena), at `position` of
/// the entry block; its allocations are added to `planned`.
static StepBuffers::LoopArena
collectLoopArena(scf::ForOp loop, int64_t at,
                 const BufferViewFlowAnalysis &aliases,
                 DenseSet<Operation *> &planned) {
  StepBuffers::LoopArena result;
  result.loop = loop;
  Block &body = *loop.getBody();
  DenseMap<Operation *, int64_t> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = index;
  int64_t end = int64_t(body.getOperations().size()) - 1;
  SmallVector<BufferLifetime> lifetimes;
  for (auto alloc : body.getOps<memref::AllocOp>()) {
    // A yielded buffer outlives its iteration (keepReturned: the yield is
    // the body's return).
    AllocUse use = analyzeAlloc(alloc, body, position, end, aliases,
                                /*keepReturned=*/true);
    if (!use.planned || use.escapes)
      continue;
    result.allocs.push_back(alloc);
    lifetimes.push_back(use.lifetime);
  }
  // Only a loop whose every allocation is an iteration's own, and which
  // carries no buffer, is one buffer of the arena: the plan of any other
  // loop would mix an arena with allocations it can only bound.
  bool whole = getCarriedBytes(*loop) == 0;
  loop.walk([&](memref::AllocOp alloc) {
    whole = whole && llvm::is_contained(result.allocs, alloc);
  });
  if (!whole) {
    result.allocs.clear();
    return result;
  }
  for (memref::AllocOp alloc : result.allocs)
    planned.insert(alloc);
  if (!result.allocs.empty())
    result.plan = planArena(lifetimes);
  result.lifetime = BufferLifetime{result.plan.size, at, at};
  return result;
}

StepBuffers remat::collectStepBuffers(func::FuncOp function,
                                      bool keepReturned) {
  Region &body = function.getBody();
  if (body.empty() || !body.hasOneBlock())
    return leaveAllUnplanned(function);

  StepBuffers result;
  Block &entry = body.front();
  DenseMap<Operation *, int64_t> position;
  for (auto [index, op] : llvm::enumerate(entry))
    position[&op] = index;
  int64_t end = entry.empty() ? 0 : int64_t(entry.getOperations().size()) - 1;

  // The unplanned bytes that can be live at each position: an allocation
  // from its op's position to that of the last use of any of its views
  // (its deallocations among them), and the carries of the loops there.
  SmallVector<int64_t> liveDelta(end + 2, 0);
  for (auto [index, op] : llvm::enumerate(entry)) {
    int64_t carried = getCarriedBytes(op);
    result.carriedBytes = std::max(result.carriedBytes, carried);
    liveDelta[index] += carried;
    liveDelta[index + 1] -= carried;
  }

  BufferViewFlowAnalysis aliases(function);
  DenseSet<Operation *> inLoopArenas;
  for (auto loop : entry.getOps<scf::ForOp>()) {
    StepBuffers::LoopArena loopArena =
        collectLoopArena(loop, position.lookup(loop), aliases, inLoopArenas);
    if (!loopArena.allocs.empty())
      result.loopArenas.push_back(std::move(loopArena));
  }
  function.walk([&](memref::AllocOp alloc) {
    if (inLoopArenas.contains(alloc))
      return;
    AllocUse use =
        analyzeAlloc(alloc, entry, position, end, aliases, keepReturned);
    if (!use.planned) {
      result.unplanned.push_back(alloc);
      result.unplannedBytes += use.lifetime.bytes;
      liveDelta[use.lifetime.first] += use.lifetime.bytes;
      liveDelta[use.freed + 1] -= use.lifetime.bytes;
      return;
    }
    result.allocs.push_back(alloc);
    result.lifetimes.push_back(use.lifetime);
    result.escapes.push_back(use.escapes);
  });
  int64_t live = 0;
  for (int64_t delta : liveDelta) {
    live += delta;
    result.unplannedPeakBytes = std::max(result.unplannedPeakBytes, live);
  }
  return result;
}

StringRef remat::getMemoryPlanPipeline(StringRef option) {
  return option.empty() ? StringRef(kBufferizePipeline) : option;
}

void remat::addMemoryPlanPipelineDialects(StringRef pipeline,
                                          DialectRegistry &registry) {
  OpPassManager pm(ModuleOp::getOperationName());
  if (succeeded(parsePassPipeline(pipeline, pm, llvm::nulls())))
    pm.getDependentDialects(registry);
}

/// Runs `pm` on `module`, a copy made for planning, and plans its function
/// `name`: buffers it returns stay its own with `keepReturned`, else as
/// mustKeepReturnedBuffers says of the copy. Only the diagnostics of this
/// thread are the plan's (a sibling's plan may run on another thread at the
/// same time); the first error becomes `error`.
static FailureOr<StepMemoryPlan> runAndPlan(PassManager &pm, ModuleOp module,
                                            StringRef name,
                                            std::optional<bool> keepReturned,
                                            std::string &error) {
  MLIRContext *context = module.getContext();
  {
    uint64_t thread = llvm::get_threadid();
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diagnostic) {
      if (llvm::get_threadid() != thread)
        return failure();
      if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
          error.empty())
        error = diagnostic.str();
      return success();
    });
    if (failed(pm.run(module)) || failed(verify(module))) {
      if (error.empty())
        error = "the bufferization pipeline failed";
      return failure();
    }
  }
  auto bufferized = module.lookupSymbol<func::FuncOp>(name);
  if (!bufferized) {
    error = "the bufferized module has no @" + name.str();
    return failure();
  }
  StepBuffers buffers = collectStepBuffers(
      bufferized, keepReturned.value_or(mustKeepReturnedBuffers(bufferized)));
  ArenaPlan arena = planArena(buffers.getArenaLifetimes());
  StepMemoryPlan plan;
  plan.arenaBytes = arena.size;
  plan.maxLiveBytes = arena.maxLiveBytes;
  plan.unplannedBytes = buffers.unplannedBytes;
  plan.carriedBytes = buffers.carriedBytes;
  plan.unplannedPeakBytes = buffers.unplannedPeakBytes;
  plan.peakBytes = arena.size + buffers.unplannedPeakBytes;
  plan.plannedBuffers = buffers.allocs.size();
  for (const StepBuffers::LoopArena &loopArena : buffers.loopArenas)
    plan.plannedBuffers += loopArena.allocs.size();
  plan.unplannedBuffers = buffers.unplanned.size();
  return plan;
}

FailureOr<StepMemoryPlan> remat::planModuleCopy(ModuleOp module, StringRef name,
                                                StringRef pipeline,
                                                std::string &error) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(pipeline, pm, errorStream)))
    return failure();
  // The budget planner bufferizes a copy per marking it measures: verifying
  // after every pass of the pipeline was a quarter of its time (ViT: 3 of
  // 12 s). The result is verified once, in runAndPlan.
  pm.enableVerifier(false);
  return runAndPlan(pm, module, name, std::nullopt, error);
}

OwningOpRef<ModuleOp> remat::copyForPlanning(Operation *function) {
  auto module = dyn_cast_or_null<ModuleOp>(function->getParentOp());
  if (!module)
    return nullptr;
  // The symbols `function` refers to, and theirs, resolved in `module`.
  llvm::SmallPtrSet<Operation *, 8> needed;
  SmallVector<Operation *> worklist = {function};
  needed.insert(function);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Region &region : op->getRegions()) {
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(&region);
      if (!uses)
        continue;
      for (const SymbolTable::SymbolUse &use : *uses) {
        Operation *symbol =
            module.lookupSymbol(use.getSymbolRef().getRootReference());
        if (symbol && needed.insert(symbol).second)
          worklist.push_back(symbol);
      }
    }
  }
  OpBuilder builder(module.getContext());
  OwningOpRef<ModuleOp> copy(ModuleOp::create(module.getLoc()));
  copy.get()->setAttrs(module->getAttrDictionary());
  builder.setInsertionPointToEnd(copy->getBody());
  for (Operation &op : module.getBody()->getOperations())
    if (needed.contains(&op))
      builder.clone(op);
  return copy;
}

void MemoryPlanPipeline::initialize(MLIRContext *context, StringRef pipeline) {
  this->context = context;
  parseError.clear();
  idle.clear();
  parsed = std::make_unique<OpPassManager>(ModuleOp::getOperationName());
  llvm::raw_string_ostream errorStream(parseError);
  if (failed(parsePassPipeline(getMemoryPlanPipeline(pipeline), *parsed,
                               errorStream))) {
    parsed.reset();
    if (parseError.empty())
      parseError = "the plan pipeline does not parse";
  }
}

std::unique_ptr<PassManager> MemoryPlanPipeline::acquire() const {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!idle.empty())
      return idle.pop_back_val();
  }
  auto pm =
      std::make_unique<PassManager>(context, ModuleOp::getOperationName());
  static_cast<OpPassManager &>(*pm) = *parsed;
  // See planModuleCopy: the result is verified once.
  pm->enableVerifier(false);
  return pm;
}

void MemoryPlanPipeline::release(std::unique_ptr<PassManager> pm) const {
  std::lock_guard<std::mutex> lock(mutex);
  idle.push_back(std::move(pm));
}

FailureOr<StepMemoryPlan> MemoryPlanPipeline::plan(ModuleOp copy,
                                                   StringRef name,
                                                   bool keepReturned,
                                                   std::string &error) const {
  if (!parsed) {
    error = parseError.empty() ? "the plan pipeline was not initialized"
                               : parseError;
    return failure();
  }
  std::unique_ptr<PassManager> pm = acquire();
  FailureOr<StepMemoryPlan> result =
      runAndPlan(*pm, copy, name, keepReturned, error);
  release(std::move(pm));
  return result;
}

FailureOr<StepMemoryPlan> remat::computeStepMemoryPlan(func::FuncOp function,
                                                       StringRef pipeline,
                                                       std::string &error) {
  auto module = function->getParentOfType<ModuleOp>();
  if (!module) {
    error = "the function is not in a module";
    return failure();
  }
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  return planModuleCopy(*copy, function.getName(), pipeline, error);
}
