//===- ThreadRng.cpp - Stateful random ops to counter-based ones ----------===//
//
// This file implements -remat-thread-rng, which gives every random op of a
// training step an explicit (seed, offset) so that it can be recomputed.
// Each execution of a random op owns its own range of the step's Philox
// stream: ranges follow program order, a loop's iterations get consecutive
// ranges (the offset advances with the iteration index), and the branches of
// a conditional get disjoint ones.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace remat {
#define GEN_PASS_DEF_REMATTHREADRNGPASS
#include "remat/Dialect/Remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

/// Returns the seed of `function`: its `{remat.rng_seed}` argument, else its
/// first `remat.rng_seed` op, moved to the entry so that it dominates every
/// random op. Null if it has neither.
static Value findSeed(func::FuncOp function) {
  for (BlockArgument arg : function.getArguments())
    if (function.getArgAttr(arg.getArgNumber(), RematDialect::kRngSeedAttrName))
      return arg;
  RngSeedOp seedOp;
  function.walk([&](RngSeedOp op) {
    seedOp = op;
    return WalkResult::interrupt();
  });
  if (!seedOp)
    return {};
  // The seed is the generator's key, which draws do not change, so reading
  // it first is the same as reading it where it was.
  seedOp->moveBefore(&function.getBody().front().front());
  return seedOp.getSeed();
}

/// Returns the random words one `remat.rng_uniform` reserves: its element
/// count rounded up to a multiple of 4, since Philox4x32-10 yields four
/// 32-bit words per counter and no two ops may share a counter.
static uint64_t getWords(RngUniformOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  return (static_cast<uint64_t>(type.getNumElements()) + 3) / 4 * 4;
}

/// Returns true for the ops whose regions each run at most once per run of
/// the op: their regions get consecutive, disjoint ranges of the stream, so
/// that whichever branch runs draws numbers no other branch draws.
static bool runsRegionsAtMostOnce(Operation *op) {
  return isa<scf::IfOp, scf::IndexSwitchOp, scf::ExecuteRegionOp, BackwardOp>(
      op);
}

namespace {

/// Lays out the random words of a function: first counts the words each op
/// and region draws in one run (rejecting the regions whose runs have no
/// index to offset by), then rewrites each random op with its offset.
class RngThreader {
public:
  explicit RngThreader(Value seed) : seed(seed) {}

  /// Returns the words one run of `region` draws, or failure after an error.
  FailureOr<uint64_t> countRegion(Region &region);

  /// Rewrites the random ops of `region`, whose words start at `base` (an
  /// i64 value, null for 0) plus `start`.
  void threadRegion(Region &region, Value base, uint64_t start);

  /// Random ops rewritten so far.
  unsigned numThreaded = 0;

private:
  FailureOr<uint64_t> countOp(Operation *op);
  Value buildOffset(OpBuilder &builder, Location loc, Value base,
                    uint64_t start, Attribute segment);
  Value buildIterationBase(scf::ForOp loop, Value base, uint64_t start);

  Value seed;
  /// Words drawn by one run of each op and region that holds random ops (a
  /// loop that runs no iteration holds them and draws none).
  DenseMap<Operation *, uint64_t> opWords;
  DenseMap<Region *, uint64_t> regionWords;
};

} // namespace

/// Emits "exhausts the stream" at `op` and returns failure.
static FailureOr<uint64_t> emitExhausted(Operation *op) {
  return op->emitOpError("exhausts the 2^64 random words of the step's stream");
}

FailureOr<uint64_t> RngThreader::countRegion(Region &region) {
  uint64_t total = 0;
  Operation *firstRandom = nullptr;
  for (Block &block : region) {
    for (Operation &op : block) {
      FailureOr<uint64_t> words = countOp(&op);
      if (failed(words))
        return failure();
      if (!opWords.contains(&op))
        continue;
      if (!firstRandom)
        firstRandom = &op;
      if (total + *words < total)
        return emitExhausted(&op);
      total += *words;
    }
  }
  // Branches between blocks may run a block any number of times, and no
  // value counts its runs.
  if (firstRandom && !region.hasOneBlock()) {
    firstRandom->emitOpError()
        << "draws random numbers in a region of " << region.getBlocks().size()
        << " blocks, whose branches may run it any number of times with the "
           "same offset; use structured control flow (scf.for, scf.if)";
    return failure();
  }
  if (firstRandom)
    regionWords[&region] = total;
  return total;
}

FailureOr<uint64_t> RngThreader::countOp(Operation *op) {
  if (auto random = dyn_cast<RngUniformOp>(op)) {
    uint64_t words = getWords(random);
    opWords[op] = words;
    return words;
  }
  if (op->getNumRegions() == 0)
    return 0;

  uint64_t sum = 0;
  bool holdsRandom = false;
  for (Region &region : op->getRegions()) {
    FailureOr<uint64_t> words = countRegion(region);
    if (failed(words))
      return failure();
    if (sum + *words < sum)
      return emitExhausted(op);
    sum += *words;
    holdsRandom |= regionWords.contains(&region);
  }
  if (!holdsRandom)
    return 0;

  // The first random op in `op`, for the notes below.
  auto firstRandom = [&]() -> Operation * {
    Operation *found = nullptr;
    op->walk<WalkOrder::PreOrder>([&](RngUniformOp random) {
      found = random;
      return WalkResult::interrupt();
    });
    return found;
  };

  uint64_t total;
  if (runsRegionsAtMostOnce(op)) {
    total = sum;
  } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
    std::optional<uint64_t> trips =
        getConstantTripCount(loop.getLowerBound(), loop.getUpperBound(),
                             loop.getStep(), !loop.getUnsignedCmp());
    if (!trips) {
      InFlightDiagnostic diag =
          op->emitOpError()
          << "draws random numbers in its body but its trip count is not a "
             "constant: each iteration's offset is the loop's first offset "
             "plus the iteration index times the words one iteration draws, "
             "so the bounds and step must be constants";
      diag.attachNote(firstRandom()->getLoc()) << "a random op is here";
      return failure();
    }
    bool overflow = false;
    total = llvm::SaturatingMultiply(*trips, sum, &overflow);
    if (overflow)
      return emitExhausted(op);
  } else {
    InFlightDiagnostic diag =
        op->emitOpError()
        << "draws random numbers in a region that may run any number of "
           "times and has no iteration index to advance their offsets by, so "
           "every run would draw the same numbers; -remat-thread-rng threads "
           "random ops in scf.for, scf.if, scf.index_switch and "
           "scf.execute_region";
    diag.attachNote(firstRandom()->getLoc()) << "a random op is here";
    return failure();
  }
  opWords[op] = total;
  return total;
}

/// Builds base + start. The ops join `segment` (the random op's, if any),
/// so that recomputation clones them rather than saving the offset.
Value RngThreader::buildOffset(OpBuilder &builder, Location loc, Value base,
                               uint64_t start, Attribute segment) {
  if (base && start == 0)
    return base;
  auto constant =
      arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(start));
  if (segment)
    constant->setAttr(RematDialect::kSegmentAttrName, segment);
  if (!base)
    return constant;
  auto sum = arith::AddIOp::create(builder, loc, base, constant);
  if (segment)
    sum->setAttr(RematDialect::kSegmentAttrName, segment);
  return sum;
}

/// Builds, at the start of `loop`'s body, the first offset of the current
/// iteration: base + start + index * words, index = (iv - lb) / step
/// (unsigned: iv - lb is below the trip count times the step).
Value RngThreader::buildIterationBase(scf::ForOp loop, Value base,
                                      uint64_t start) {
  OpBuilder builder = OpBuilder::atBlockBegin(loop.getBody());
  Location loc = loop.getLoc();
  Value index = loop.getInductionVar();
  if (!matchPattern(loop.getLowerBound(), m_Zero()))
    index = arith::SubIOp::create(builder, loc, index, loop.getLowerBound());
  if (!matchPattern(loop.getStep(), m_One()))
    index = arith::DivUIOp::create(builder, loc, index, loop.getStep());
  Type i64 = builder.getI64Type();
  if (index.getType().isIndex())
    index = arith::IndexCastUIOp::create(builder, loc, i64, index);
  else if (index.getType().getIntOrFloatBitWidth() < 64)
    index = arith::ExtUIOp::create(builder, loc, i64, index);
  else if (index.getType().getIntOrFloatBitWidth() > 64)
    index = arith::TruncIOp::create(builder, loc, i64, index);

  uint64_t words = regionWords.lookup(&loop.getRegion());
  Value wordsValue =
      arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(words));
  Value offset = arith::MulIOp::create(builder, loc, index, wordsValue);
  if (start != 0)
    offset = arith::AddIOp::create(
        builder, loc, offset,
        arith::ConstantOp::create(builder, loc,
                                  builder.getI64IntegerAttr(start)));
  if (base)
    offset = arith::AddIOp::create(builder, loc, base, offset);
  return offset;
}

void RngThreader::threadRegion(Region &region, Value base, uint64_t start) {
  IRRewriter rewriter(region.getContext());
  for (Operation &op : llvm::make_early_inc_range(region.front())) {
    auto it = opWords.find(&op);
    if (it == opWords.end())
      continue;
    uint64_t words = it->second;
    if (auto random = dyn_cast<RngUniformOp>(op)) {
      rewriter.setInsertionPoint(random);
      Value offset = buildOffset(rewriter, random.getLoc(), base, start,
                                 op.getAttr(RematDialect::kSegmentAttrName));
      auto philox = PhiloxUniformOp::create(rewriter, random.getLoc(),
                                            random.getType(), seed, offset);
      philox->setDiscardableAttrs(op.getDiscardableAttrDictionary());
      // A later op may reuse the address of the erased one.
      opWords.erase(it);
      rewriter.replaceOp(random, philox.getResult());
      ++numThreaded;
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      threadRegion(loop.getRegion(), buildIterationBase(loop, base, start), 0);
    } else {
      uint64_t regionStart = start;
      for (Region &nested : op.getRegions()) {
        auto nestedIt = regionWords.find(&nested);
        if (nestedIt == regionWords.end())
          continue;
        threadRegion(nested, base, regionStart);
        regionStart += nestedIt->second;
      }
    }
    start += words;
  }
}

namespace {

struct RematThreadRngPass
    : remat::impl::RematThreadRngPassBase<RematThreadRngPass> {
  using RematThreadRngPassBase::RematThreadRngPassBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    RngUniformOp firstRandom;
    function.walk<WalkOrder::PreOrder>([&](RngUniformOp op) {
      firstRandom = op;
      return WalkResult::interrupt();
    });
    if (!firstRandom)
      return;

    Value seed = findSeed(function);
    if (!seed) {
      firstRandom.emitOpError()
          << "has no seed to thread: mark an i64 argument of @"
          << function.getSymName() << " with {"
          << RematDialect::kRngSeedAttrName << "} or add a 'remat.rng_seed' op";
      return signalPassFailure();
    }

    RngThreader threader(seed);
    if (failed(threader.countRegion(function.getBody())))
      return signalPassFailure();
    threader.threadRegion(function.getBody(), Value(), 0);
    numThreaded += threader.numThreaded;
  }
};

} // namespace
