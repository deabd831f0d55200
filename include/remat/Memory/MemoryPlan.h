//===- MemoryPlan.h - One static arena per training step --------*- C++ -*-===//
//
// Declares the static memory plan of a bufferized training step: the heap
// buffers the step allocates, their lifetimes in program order and their
// offsets in one arena. The lowering allocates that arena once and places
// every planned buffer at its offset (-remat-plan-arena), and -remat-report
// reads its static peak from the same plan, so the prediction is the
// allocator's measurement by construction.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_MEMORYPLAN_H
#define REMAT_ANALYSIS_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <mutex>
#include <optional>

namespace remat {

/// The alignment of the arena and of every buffer in it, in bytes: the
/// alignment the lowering gives every heap buffer, and a cache line.
constexpr int64_t kArenaAlignment = 64;

/// A buffer's size and the program positions where it is live, both
/// included.
struct BufferLifetime {
  int64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
};

/// Offsets of buffers in one arena. Buffers whose lifetimes overlap never
/// overlap in the arena; every offset is a multiple of kArenaAlignment and
/// every buffer takes its size rounded up to one.
struct ArenaPlan {
  llvm::SmallVector<int64_t> offsets;
  /// The arena's bytes: the end of the highest buffer.
  int64_t size = 0;
  /// The most rounded bytes live at one position: no placement is smaller.
  int64_t maxLiveBytes = 0;
};

/// Rounds `bytes` up to a multiple of kArenaAlignment.
int64_t roundToArenaAlignment(int64_t bytes);

/// Returns the most rounded bytes of `buffers` live at one position.
/// O(n log n).
int64_t getMaxLiveBytes(llvm::ArrayRef<BufferLifetime> buffers);

/// Places `buffers` in one arena: the smallest of greedy placements, each
/// putting a buffer in the tightest gap among the already placed buffers it
/// overlaps in time (else above them), in order of first position (an
/// allocator's order, O(n k log k) for k buffers live at once) and, up to
/// kMaxBySizeBuffers buffers, in decreasing order of size (TFLite's and
/// XLA's heap simulators' order; equal sizes by lifetime, first position or
/// last position), of lifetime and of bytes times lifetime (O(n^2 log n)
/// each). With `search`, the best of those orders is then improved by
/// swapping neighbours in it (from 4 to 256 more placements, fewer the more
/// buffers), where the top is above the most bytes live at once.
ArenaPlan planArena(llvm::ArrayRef<BufferLifetime> buffers, bool search = true);

/// The largest number of buffers planArena places in order of size.
constexpr size_t kMaxBySizeBuffers = 8192;

/// The heap buffers of a bufferized step function and their lifetimes.
///
/// Positions are those of the function's entry block, an op nested in a
/// region counting at its ancestor there. A buffer is planned when it is a
/// `memref.alloc` of a static, identity-layout memref in the entry block of
/// a single-block body, and every `memref.dealloc` of any of its aliases
/// frees the allocation itself at the entry block's level. It is live from
/// its allocation to the last use of any alias; one that the function
/// returns is live to the end and `escapes`; with `keepReturned` (for a
/// function its module calls, whose callers free each result on its own) it
/// is left to the allocator instead. Every other allocation in the function
/// is `unplanned` and left to the allocator, except the buffers of a loop's
/// iterations (`loopArenas`).
struct StepBuffers {
  /// The buffers of an `scf.for` of the entry block that carries no buffer
  /// and whose every allocation is one iteration's own (static, in the loop
  /// body's block, every use of an alias there, not yielded, freed there by
  /// its own deallocation): planned by the positions of the body's block in
  /// an arena of their own, `plan`, which is one buffer of the step's
  /// arena, live at the loop's position. Every iteration reuses the same
  /// offsets, and the loop allocates nothing else: the plan stays exact.
  struct LoopArena {
    mlir::Operation *loop = nullptr;
    llvm::SmallVector<mlir::memref::AllocOp> allocs;
    ArenaPlan plan;
    /// `plan.size` bytes at the loop's position.
    BufferLifetime lifetime;
  };

  llvm::SmallVector<mlir::memref::AllocOp> allocs;
  llvm::SmallVector<BufferLifetime> lifetimes;
  llvm::SmallVector<bool> escapes;
  llvm::SmallVector<LoopArena> loopArenas;
  /// What the step's arena places: `lifetimes`, then one buffer per loop
  /// arena, in the order of `loopArenas`.
  llvm::SmallVector<BufferLifetime> getArenaLifetimes() const;
  llvm::SmallVector<mlir::Operation *> unplanned;
  /// Bytes of the unplanned allocations of static size (rounded).
  int64_t unplannedBytes = 0;
  /// Bytes of the buffers loops carry from one iteration to the next: the
  /// most, over the ops of the function body, of the memref iter_args of
  /// the loops nested in one (static sizes, rounded; an iter_arg yielded
  /// back unchanged carries nothing). An iteration allocates its result
  /// before the buffer it got from the previous one is freed, so an
  /// allocation a running loop yields can have two instances live at once.
  int64_t carriedBytes = 0;
  /// The most bytes of unplanned allocations and carries live at one
  /// position: an unplanned allocation counts from the position of its op
  /// (or of the op of the function body around it) to that of the last use
  /// of any of its views, its deallocations included, and a loop's carries
  /// at the position of the op around it. All of them when the body has
  /// more than one block.
  int64_t unplannedPeakBytes = 0;
};

/// Collects the buffers of `function` (bufferized, deallocations placed).
StepBuffers collectStepBuffers(mlir::func::FuncOp function,
                               bool keepReturned = false);

/// Returns true if buffers `function` returns must stay allocations of their
/// own: it is called within its module, or is private.
bool mustKeepReturnedBuffers(mlir::func::FuncOp function);

/// The static memory plan of a step as its lowering will allocate it.
struct StepMemoryPlan {
  /// The allocator's peak of the generated code: the arena plus the most
  /// bytes of unplanned allocations and carries live at one position
  /// (exact when there are none, an upper bound otherwise).
  int64_t peakBytes = 0;
  int64_t arenaBytes = 0;
  int64_t maxLiveBytes = 0;
  int64_t unplannedBytes = 0;
  int64_t carriedBytes = 0;
  int64_t unplannedPeakBytes = 0;
  int64_t plannedBuffers = 0;
  int64_t unplannedBuffers = 0;
};

/// The pipeline that bufferizes a step the way the lowerings do, up to the
/// arena placement, in the textual form of a module pass pipeline.
constexpr llvm::StringLiteral kBufferizePipeline =
    "func.func(remat-thread-rng),remat-bufferize{plan-arena=false}";

/// The memory-plan pipeline a pass option names: `option`, or
/// kBufferizePipeline when it is empty.
llvm::StringRef getMemoryPlanPipeline(llvm::StringRef option);

/// Adds the dialects `pipeline` loads to `registry`, so that a pass that
/// plans can declare them before any function runs (nothing if it does not
/// parse: the memory plan then fails with the parser's message).
void addMemoryPlanPipelineDialects(llvm::StringRef pipeline,
                                   mlir::DialectRegistry &registry);

/// Plans `function` (a tensor-level step) as its lowering will: runs
/// `pipeline` (a module pass pipeline, kBufferizePipeline by default) on a
/// copy of the module that holds it, then collectStepBuffers and planArena
/// on the bufferized copy of `function`. The IR is left unchanged. Fails
/// with the pipeline's first diagnostic in `error` if it does not parse or
/// fails.
llvm::FailureOr<StepMemoryPlan>
computeStepMemoryPlan(mlir::func::FuncOp function, llvm::StringRef pipeline,
                      std::string &error);

/// Plans the function named `name` in `module`, a copy made for planning
/// that this bufferizes in place; otherwise as computeStepMemoryPlan.
llvm::FailureOr<StepMemoryPlan> planModuleCopy(mlir::ModuleOp module,
                                               llvm::StringRef name,
                                               llvm::StringRef pipeline,
                                               std::string &error);

/// A new module, with the attributes of the module around `function` (an op
/// of its body), that holds copies of `function` and of every symbol it
/// refers to, transitively (its callees), in the module's order: what the
/// plan of `function` depends on, and nothing a pass running on a sibling
/// function may be changing. Null if `function` is not in a module's body.
mlir::OwningOpRef<mlir::ModuleOp> copyForPlanning(mlir::Operation *function);

/// A memory-plan pipeline parsed once and run on any number of module copies,
/// from any number of threads at once: each run takes a pass manager of its own
/// from a pool (cloned from the parsed pipeline when every one is busy), so
/// no two threads share pass instances, and diagnostics are caught per
/// thread. Planning passes build one in their initialize().
class MemoryPlanPipeline {
public:
  MemoryPlanPipeline() = default;
  /// A copy is empty, to be initialized again: a pass that holds one is
  /// copied when its pass manager is, and initialized after.
  MemoryPlanPipeline(const MemoryPlanPipeline &) {}
  MemoryPlanPipeline &operator=(const MemoryPlanPipeline &) = delete;

  /// Parses `pipeline` (a module pass pipeline; kBufferizePipeline when
  /// empty). If it does not parse, every plan fails with the parser's
  /// message.
  void initialize(mlir::MLIRContext *context, llvm::StringRef pipeline);

  /// Bufferizes `copy` in place and plans its function `name` as
  /// planModuleCopy does; buffers the function returns stay allocations of
  /// their own with `keepReturned` (mustKeepReturnedBuffers of the original,
  /// which a copy without the callers cannot tell). Thread-safe.
  llvm::FailureOr<StepMemoryPlan> plan(mlir::ModuleOp copy,
                                       llvm::StringRef name, bool keepReturned,
                                       std::string &error) const;

private:
  /// A pass manager no run is using, made if there is none.
  std::unique_ptr<mlir::PassManager> acquire() const;
  void release(std::unique_ptr<mlir::PassManager> pm) const;

  mlir::MLIRContext *context = nullptr;
  std::string parseError;
  /// The parsed pipeline, never run: the pool's pass managers are its
  /// clones.
  std::unique_ptr<mlir::OpPassManager> parsed;
  mutable std::mutex mutex;
  mutable llvm::SmallVector<std::unique_ptr<mlir::PassManager>, 0> idle;
};

} // namespace remat

#endif // REMAT_ANALYSIS_MEMORYPLAN_H
