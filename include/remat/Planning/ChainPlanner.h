//===- ChainPlanner.h - Nested checkpointing of a chain ---------*- C++ -*-===//
//
// Declares the chain model of a training step and its dynamic program, after
// Rotor (Beaumont et al. 2019, heterogeneous chains) and Revolve (Griewank and
// Walther 2000): for every memory limit, the nested checkpoint segments that
// recompute the fewest FLOPs. The budget planner turns its plans into
// markings with nested `remat.segment` paths and measures each one exactly.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_ANALYSIS_CHAINPLANNER_H
#define REMAT_ANALYSIS_CHAINPLANNER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace remat {

/// The checkpoint segment of an op: its `remat.segment` path, outermost
/// first (`{0}`: segment 0; `{0, 1}`: segment 1 nested in segment 0), or
/// empty when the op is saved.
using SegmentPath = llvm::SmallVector<int64_t, 2>;

/// A chain of stages 0..n-1: stage i reads the output of stage i - 1 (the
/// first stage reads arguments, which cost nothing) and the backward region
/// visits the stages in reverse, stage i's backward reading what stage i
/// keeps. This is the model the dynamic program is exact on.
struct ChainStage {
  /// FLOPs of the stage's forward.
  int64_t flops = 0;
  /// Bytes of the stage's output, the next stage's input.
  int64_t outBytes = 0;
  /// Whether the backward region reads the output.
  bool outRead = false;
  /// Bytes of the stage's other values that the backward region reads.
  int64_t keptBytes = 0;
  /// Bytes live while the stage runs, besides its input (at least
  /// outBytes + keptBytes).
  int64_t transientBytes = 0;
  /// Bytes of the backward region's own values (gradients) live while the
  /// backward reads the stage: at its reader and at the recomputations
  /// placed before it.
  int64_t backwardBytes = 0;
  /// Bytes of the backward region's own values after the stage's reader,
  /// once what it read is dead, until the backward reads another stage.
  int64_t afterBytes = 0;
  /// Whether the stage writes its output into its input's buffer when the
  /// input dies at it (an elementwise op reading the previous output, of
  /// the same type): the two are then live as one buffer of outBytes.
  bool inPlace = false;
  /// Whether an instance of the output is computed inside the next stage
  /// (elementwise fusion) when that stage's compute is its only reader: it
  /// is then never stored. Read by the backward, the input of a
  /// recomputation (read through a barrier), or written in place into its
  /// own input's buffer, it is stored.
  bool fusedOut = false;

  bool isRead() const { return outRead || keptBytes > 0; }
};

/// A plan for a chain: each stage's segment path (empty: saved by the
/// forward), and its cost in the model.
struct ChainPlan {
  llvm::SmallVector<SegmentPath, 0> paths;
  int64_t peakBytes = 0;
  int64_t recomputeFlops = 0;
};

/// Evaluates a nested plan in the chain model, by the rules of
/// -remat-checkpoint (see CheckpointPlan.h) on a chain:
///
/// * the forward runs every stage; a stage in a segment keeps nothing, a
///   stage outside every segment keeps what the backward reads;
/// * a segment is recomputed from its input when the backward first reads
///   one of its stages (the last stage it reads, in the reverse order), with
///   early stop: up to that stage; in that recomputation, a stage outside the
///   segment's nested segments keeps what the backward reads and a nested
///   segment keeps nothing, and is recomputed in turn at its own first read;
/// * a segment's input stays live until its last recomputation;
/// * a stage's reader is followed by a step where only the backward's own
///   values (`afterBytes`) are added;
/// * a stage marked `inPlace` shares its input's buffer when it is the
///   input's last use;
/// * a `fusedOut` stage's output read only by the next stage's compute is
///   never stored, unless it was written in place.
///
/// Paths must be well nested: stages with a common prefix are contiguous.
/// Returns none for a path structure the model does not describe (a nested
/// segment that does not end below its parent's last read stage, a segment
/// that is not contiguous). O(n * depth).
std::optional<ChainPlan> evaluateChainPlan(llvm::ArrayRef<ChainStage> chain,
                                           llvm::ArrayRef<SegmentPath> paths);

/// Calls `visit` with every well-nested plan of `n` stages, down to
/// `maxDepth` levels of segments: at each level an interval of stages is cut
/// into pieces, each a stage kept at that level or a nested segment (a
/// contiguous run, never all of its parent's stages again, while the forward
/// level may hold one segment of every stage). Segment ids are unique in a
/// plan. For n = 1..6 there are 2, 8, 48, 304, 1876, 11348 plans of at most
/// three levels.
void forEachNestedPlan(
    unsigned n, unsigned maxDepth,
    llvm::function_ref<void(llvm::ArrayRef<SegmentPath>)> visit);

/// The dynamic program over a chain: for every memory limit m (in units of
/// `getQuantum()` bytes, 0 <= m <= `getLimit()`), the fewest recompute FLOPs
/// of a nested plan whose model peak is at most m units, with the sizes
/// rounded up to units. Exact in the model when the quantum divides every
/// size (it is 1 byte when the sizes allow). O(n^3 * M) time, O(n^2 * M)
/// memory for n stages and M units.
class ChainPlanner {
public:
  ChainPlanner(llvm::ArrayRef<ChainStage> chain, unsigned maxUnits = 512);

  int64_t getQuantum() const { return quantum; }
  unsigned getLimit() const { return units; }
  /// The fewest recompute FLOPs with model peak <= `limit` units, or none.
  std::optional<int64_t> getCost(unsigned limit) const;
  /// The plan behind getCost(limit).
  std::optional<ChainPlan> getPlan(unsigned limit) const;
  /// The plans of the model's Pareto front (peak against FLOPs), lowest peak
  /// first, at most `maxPlans` of them (spread evenly over the front).
  std::vector<ChainPlan> getFront(unsigned maxPlans) const;

private:
  struct Choice;
  /// How a level's input is live: held by the caller, counted by the level
  /// and freed once read, or fused into the level's first stage.
  enum Input : unsigned { Free, Held, Fused };
  int64_t &entry(Input input, unsigned s, unsigned t, unsigned m);
  int64_t entry(Input input, unsigned s, unsigned t, unsigned m) const;
  int64_t topEntry(Input input, unsigned s, unsigned m) const;
  int64_t inputBytes(Input input, unsigned s) const;
  void solve();
  struct Level;
  int64_t bestLevel(Input input, unsigned s, unsigned t, unsigned m, bool top,
                    Choice *choice) const;
  void considerKeeping(Level &level) const;
  void considerNesting(Level &level) const;
  void extract(Input input, unsigned s, unsigned t, unsigned m, bool top,
               SegmentPath prefix, int64_t &nextId, ChainPlan &plan) const;

  std::vector<ChainStage> stages;
  /// Sizes in units: output, kept, transient.
  std::vector<int64_t> out, kept, transient, backward, after;
  /// lastRead[s][t]: the last read stage in [s, t], or -1.
  std::vector<int> lastRead;
  std::vector<int64_t> prefixFlops;
  int64_t quantum = 1;
  unsigned units = 0;
  unsigned n = 0;
  /// cost[input][s][t][m] for recomputations, top[input][s][m] for the
  /// forward level over the suffix from s.
  std::vector<int64_t> cost, top;
};

} // namespace remat

#endif // REMAT_ANALYSIS_CHAINPLANNER_H
