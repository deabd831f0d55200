//===- CheckpointScans.cpp - Save every k-th carry of a scan --------------===//
//
// This file implements the rewrites of -remat-checkpoint-loops: a forward
// scan that stacks what its reverse backward loop reads saves only every
// k-th carry instead, and the backward loop recomputes each block of k
// iterations before it walks that block in reverse; the marked ops of a
// scan's body are recomputed per iteration (docs/Loops.md).
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/Transforms/CheckpointScans.h"

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace remat;

/// The trip count n of `loop` if it runs over `index` from 0 to the
/// constant n step 1.
static std::optional<int64_t> getTripCount(scf::ForOp loop) {
  if (!loop.getInductionVar().getType().isIndex() ||
      !isConstantIntValue(loop.getLowerBound(), 0) ||
      !isConstantIntValue(loop.getStep(), 1))
    return std::nullopt;
  std::optional<uint64_t> trips = getConstantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  if (!trips || *trips < 1 || *trips > uint64_t(INT64_MAX))
    return std::nullopt;
  return int64_t(*trips);
}

/// Whether the slice takes or writes the whole of one slot along dimension
/// 0 at `index`: offsets [index, 0, ...], sizes [1, full...], unit strides.
static bool isSlotAccess(OffsetSizeAndStrideOpInterface slice, ShapedType stack,
                         Value index) {
  if (stack.getRank() < 1 || !stack.hasStaticShape())
    return false;
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> strides = slice.getMixedStrides();
  if (offsets.size() != size_t(stack.getRank()) ||
      dyn_cast_if_present<Value>(offsets[0]) != index)
    return false;
  for (int64_t d = 0; d < stack.getRank(); ++d) {
    if (!isConstantIntValue(strides[d], 1) ||
        !isConstantIntValue(sizes[d], d == 0 ? 1 : stack.getDimSize(d)) ||
        (d > 0 && !isConstantIntValue(offsets[d], 0)))
      return false;
  }
  return true;
}

namespace {

/// A forward scan and the backward loop that walks it in reverse.
struct ScanPair {
  scf::ForOp forward, backward;
  int64_t trips = 0;
  /// Per forward iter_arg: the insert_slice writing its slot iv, or null
  /// for a carry.
  SmallVector<tensor::InsertSliceOp> stackWrites;
  /// The backward loop's reads of the stacks, at slot n - 1 - j.
  SmallVector<tensor::ExtractSliceOp> stackReads;
};

} // namespace

/// Why `loop` is not a scan this pass rewrites, or empty with `pair` set.
static std::string matchScan(scf::ForOp loop, BackwardOp backwardOp,
                             ScanPair &pair) {
  std::optional<int64_t> trips = getTripCount(loop);
  if (!trips)
    return "it does not run over index from 0 to a constant n step 1";
  pair.forward = loop;
  pair.trips = *trips;
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  bool hasStack = false;
  for (auto [number, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
    tensor::InsertSliceOp write;
    if (arg.hasOneUse())
      write = dyn_cast<tensor::InsertSliceOp>(*arg.getUsers().begin());
    if (write && write.getDest() == arg &&
        yield.getOperand(number) == write.getResult() &&
        write.getResult().hasOneUse() &&
        isSlotAccess(write, write.getDestType(), loop.getInductionVar())) {
      pair.stackWrites.push_back(write);
      hasStack = true;
      continue;
    }
    auto carry = dyn_cast<RankedTensorType>(arg.getType());
    if (!carry || !carry.hasStaticShape())
      return "carry #" + std::to_string(number) +
             " is not a statically shaped tensor";
    pair.stackWrites.push_back({});
  }
  if (!hasStack)
    return "it stacks nothing";
  WalkResult effects = loop.getBody()->walk([&](Operation *op) {
    if (isa<scf::YieldOp>(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (effects.wasInterrupted())
    return "its body has an op with memory effects (a stateful random op: "
           "run -remat-thread-rng first)";

  // Every use of a stack is a read of slot n - 1 - j in one backward loop.
  for (auto [number, write] : llvm::enumerate(pair.stackWrites)) {
    if (!write)
      continue;
    for (Operation *user : loop.getResult(number).getUsers()) {
      auto read = dyn_cast<tensor::ExtractSliceOp>(user);
      auto parent = read ? dyn_cast<scf::ForOp>(read->getParentOp()) : nullptr;
      if (!parent || parent->getParentOp() != backwardOp)
        return "stack #" + std::to_string(number) +
               " is used other than by a loop directly in the backward region";
      if (pair.backward && pair.backward != parent)
        return "its stacks are read by two backward loops";
      pair.backward = parent;
      auto index = read.getOffsets().empty()
                       ? nullptr
                       : read.getOffsets()[0].getDefiningOp<arith::SubIOp>();
      if (!index || index.getRhs() != parent.getInductionVar() ||
          !isConstantIntValue(index.getLhs(), pair.trips - 1) ||
          !isSlotAccess(read, read.getSourceType(), index.getResult()))
        return "stack #" + std::to_string(number) +
               " is read other than at slot n - 1 - j";
      pair.stackReads.push_back(read);
    }
  }
  if (!pair.backward)
    return "the backward region reads none of its stacks";
  if (getTripCount(pair.backward) != pair.trips)
    return "the backward loop does not run over index from 0 to n step 1";
  return {};
}

std::optional<int64_t> remat::matchCheckpointableScan(scf::ForOp loop,
                                                      BackwardOp backwardOp) {
  ScanPair pair;
  if (!matchScan(loop, backwardOp, pair).empty())
    return std::nullopt;
  return pair.trips;
}

int64_t remat::getSqrtBlock(int64_t n) {
  int64_t k = std::max<int64_t>(1, int64_t(std::sqrt(double(n))));
  while (n % k)
    --k;
  return k;
}

/// Bytes of a statically shaped tensor type (8 per element of unknown size).
static int64_t getBytes(Type type) {
  auto shaped = cast<RankedTensorType>(type);
  return getTypeBytes(shaped).value_or(shaped.getNumElements() * 8);
}

/// `type` with dimension 0 of `slots` slots of it in front (`drop` = 0), or
/// with its dimension 0 replaced (`drop` = 1).
static RankedTensorType getStackType(RankedTensorType type, int64_t slots,
                                     unsigned drop) {
  SmallVector<int64_t> shape{slots};
  llvm::append_range(shape, type.getShape().drop_front(drop));
  return RankedTensorType::get(shape, type.getElementType());
}

namespace {

/// Builds the slot accesses and loops of the rewrite.
struct ScanRewriter {
  ScanPair &pair;
  int64_t k;
  /// The `remat.id` of the forward loop over blocks, which the backward's
  /// rerun loops name in `remat.rerun_of`.
  int64_t id;
  OpBuilder b;
  Location loc;
  SmallVector<unsigned> carryNumbers, stackNumbers;

  ScanRewriter(ScanPair &pair, int64_t k, int64_t id)
      : pair(pair), k(k), id(id), b(pair.forward), loc(pair.forward.getLoc()) {
    for (auto [number, write] : llvm::enumerate(pair.stackWrites))
      (write ? stackNumbers : carryNumbers).push_back(number);
  }

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  /// The offsets, sizes and strides of slot `at` of `stack`.
  void getSlot(Value stack, Value at, SmallVectorImpl<OpFoldResult> &offsets,
               SmallVectorImpl<OpFoldResult> &sizes,
               SmallVectorImpl<OpFoldResult> &strides) {
    auto type = cast<RankedTensorType>(stack.getType());
    offsets.assign(type.getRank(), b.getIndexAttr(0));
    offsets[0] = at;
    sizes.assign({b.getIndexAttr(1)});
    for (int64_t d : type.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(d));
    strides.assign(type.getRank(), b.getIndexAttr(1));
  }
  Value readSlot(Value stack, Value at, Type resultType) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    getSlot(stack, at, offsets, sizes, strides);
    return tensor::ExtractSliceOp::create(b, loc,
                                          cast<RankedTensorType>(resultType),
                                          stack, offsets, sizes, strides);
  }
  Value writeSlot(Value value, Value stack, Value at) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    getSlot(stack, at, offsets, sizes, strides);
    return tensor::InsertSliceOp::create(b, loc, value, stack, offsets, sizes,
                                         strides);
  }

  /// Clones the forward body for iteration `iv` from `carries` at the
  /// builder; returns the next carries and, with `stacks`, those stacks
  /// with this iteration's slot `at` written (else the writes are dropped).
  std::pair<SmallVector<Value>, SmallVector<Value>>
  cloneForwardBody(Value iv, ValueRange carries, ValueRange stacks, Value at) {
    scf::ForOp forward = pair.forward;
    IRMapping mapping;
    mapping.map(forward.getInductionVar(), iv);
    for (auto [number, carry] : llvm::zip_equal(carryNumbers, carries))
      mapping.map(forward.getRegionIterArgs()[number], carry);
    SmallVector<Value> written;
    for (Operation &op : forward.getBody()->without_terminator()) {
      auto write = dyn_cast<tensor::InsertSliceOp>(op);
      if (write && llvm::is_contained(pair.stackWrites, write)) {
        if (!stacks.empty()) {
          unsigned number =
              llvm::find(pair.stackWrites, write) - pair.stackWrites.begin();
          unsigned position =
              llvm::find(stackNumbers, number) - stackNumbers.begin();
          written.push_back(writeSlot(mapping.lookup(write.getSource()),
                                      stacks[position], at));
        }
        continue;
      }
      Operation *copy = b.clone(op, mapping);
      // The rerun's ops name the scan too: canonicalization inlines a rerun
      // loop of one iteration (k = 1), and its ops are still recomputation.
      if (!stacks.empty())
        copy->setAttr(RematDialect::kRerunOfAttrName, b.getI64IntegerAttr(id));
    }
    auto yield = cast<scf::YieldOp>(forward.getBody()->getTerminator());
    SmallVector<Value> next;
    for (unsigned number : carryNumbers)
      next.push_back(mapping.lookupOrDefault(yield.getOperand(number)));
    return {next, written};
  }

  /// The forward in blocks of k iterations, each block's first carries
  /// written to slot b of one checkpoint stack per carry. Returns the
  /// checkpoint stacks; the old loop's carry results are replaced.
  SmallVector<Value> rewriteForward() {
    scf::ForOp forward = pair.forward;
    int64_t blocks = pair.trips / k;
    b.setInsertionPoint(forward);
    SmallVector<Value> inits;
    for (unsigned number : carryNumbers)
      inits.push_back(forward.getInitArgs()[number]);
    for (unsigned number : carryNumbers) {
      auto type = getStackType(
          cast<RankedTensorType>(forward.getResultTypes()[number]), blocks, 0);
      inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                              type.getElementType()));
    }
    Value c0 = index(0), c1 = index(1), cBlocks = index(blocks), cK = index(k);
    size_t numCarries = carryNumbers.size();
    auto outer = scf::ForOp::create(
        b, loc, c0, cBlocks, c1, inits,
        [&](OpBuilder &, Location, Value block, ValueRange args) {
          SmallVector<Value> checkpoints;
          for (auto [carry, stack] : llvm::zip_equal(
                   args.take_front(numCarries), args.drop_front(numCarries)))
            checkpoints.push_back(writeSlot(carry, stack, block));
          Value base = arith::MulIOp::create(b, loc, block, cK);
          auto inner = scf::ForOp::create(
              b, loc, c0, cK, c1, args.take_front(numCarries),
              [&](OpBuilder &, Location, Value t, ValueRange carries) {
                Value iv = arith::AddIOp::create(b, loc, base, t);
                auto next = cloneForwardBody(iv, carries, {}, {}).first;
                scf::YieldOp::create(b, loc, next);
              });
          SmallVector<Value> yielded(inner.getResults());
          llvm::append_range(yielded, checkpoints);
          scf::YieldOp::create(b, loc, yielded);
        });
    outer->setAttr(RematDialect::kIdAttrName, b.getI64IntegerAttr(id));
    for (auto [position, number] : llvm::enumerate(carryNumbers))
      forward.getResult(number).replaceAllUsesWith(outer.getResult(position));
    return SmallVector<Value>(outer.getResults().drop_front(numCarries));
  }

  /// The backward loop in blocks of k iterations, last block first: each
  /// recomputes its k forward iterations from its checkpoint into local
  /// stacks of k slots, then runs its k backward iterations on them.
  void rewriteBackward(ValueRange checkpoints) {
    scf::ForOp forward = pair.forward, backward = pair.backward;
    int64_t blocks = pair.trips / k;
    size_t numCarries = carryNumbers.size();
    b.setInsertionPoint(backward);
    Value c0 = index(0), c1 = index(1), cBlocks = index(blocks), cK = index(k);
    Value cLastBlock = index(blocks - 1), cLastSlot = index(k - 1);
    auto outer = scf::ForOp::create(
        b, loc, c0, cBlocks, c1, backward.getInitArgs(),
        [&](OpBuilder &, Location, Value reversed, ValueRange args) {
          Value block = arith::SubIOp::create(b, loc, cLastBlock, reversed);
          SmallVector<Value> inits;
          for (auto [checkpoint, number] :
               llvm::zip_equal(checkpoints, carryNumbers))
            inits.push_back(
                readSlot(checkpoint, block, forward.getResultTypes()[number]));
          for (unsigned number : stackNumbers) {
            auto type = getStackType(
                cast<RankedTensorType>(forward.getResultTypes()[number]), k, 1);
            inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                                    type.getElementType()));
          }
          Value base = arith::MulIOp::create(b, loc, block, cK);
          auto recompute = scf::ForOp::create(
              b, loc, c0, cK, c1, inits,
              [&](OpBuilder &, Location, Value t, ValueRange carried) {
                Value iv = arith::AddIOp::create(b, loc, base, t);
                auto [next, written] =
                    cloneForwardBody(iv, carried.take_front(numCarries),
                                     carried.drop_front(numCarries), t);
                llvm::append_range(next, written);
                scf::YieldOp::create(b, loc, next);
              });
          recompute->setAttr(RematDialect::kRerunOfAttrName,
                             b.getI64IntegerAttr(id));
          ValueRange locals = recompute.getResults().drop_front(numCarries);
          Value first = arith::MulIOp::create(b, loc, reversed, cK);
          auto inner = scf::ForOp::create(
              b, loc, c0, cK, c1, args,
              [&](OpBuilder &, Location, Value t, ValueRange carried) {
                IRMapping mapping;
                mapping.map(backward.getInductionVar(),
                            arith::AddIOp::create(b, loc, first, t));
                mapping.map(backward.getRegionIterArgs(), carried);
                Value at = arith::SubIOp::create(b, loc, cLastSlot, t);
                for (Operation &op : backward.getBody()->without_terminator()) {
                  auto read = dyn_cast<tensor::ExtractSliceOp>(op);
                  if (!read || !llvm::is_contained(pair.stackReads, read)) {
                    b.clone(op, mapping);
                    continue;
                  }
                  unsigned number =
                      cast<OpResult>(read.getSource()).getResultNumber();
                  unsigned position =
                      llvm::find(stackNumbers, number) - stackNumbers.begin();
                  mapping.map(read.getResult(),
                              readSlot(locals[position], at, read.getType()));
                }
                auto yield =
                    cast<scf::YieldOp>(backward.getBody()->getTerminator());
                SmallVector<Value> next;
                for (Value value : yield.getOperands())
                  next.push_back(mapping.lookupOrDefault(value));
                scf::YieldOp::create(b, loc, next);
              });
          scf::YieldOp::create(b, loc, inner.getResults());
        });
    backward.replaceAllUsesWith(outer.getResults());
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Segments inside a scan's body
//===----------------------------------------------------------------------===//

/// Whether the backward recomputes `op`, an op of a scan's body, per
/// iteration: it is marked, and not saved by its policy.
static bool isRecomputedInBody(Operation *op) {
  return op->hasAttr(RematDialect::kSegmentAttrName) &&
         getPolicy(op) != Policy::Save;
}

/// The first op of the forward body of `loop` that holds a checkpoint mark
/// (a segment or a policy), or null.
static Operation *getFirstMark(scf::ForOp loop) {
  for (Operation &op : loop.getBody()->without_terminator())
    if (op.hasAttr(RematDialect::kSegmentAttrName) ||
        op.hasAttr(RematDialect::kPolicyAttrName))
      return &op;
  return nullptr;
}

/// The values `op` reads: its operands and the values its regions use from
/// above.
static SmallVector<Value> getReadValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  llvm::append_range(values, above);
  return values;
}

namespace {

/// What the backward loop recomputes of a scan's body per iteration, and
/// what it reads from the forward's stacks to do so.
struct BodyRecompute {
  /// The stacks (iter_arg numbers) whose slots the backward recomputes.
  SmallVector<unsigned> dropped;
  /// The body's ops to clone into the backward loop, in body order.
  SetVector<Operation *> ops;
  /// The values the clones read from a slot of a stack: the number of the
  /// stack that already holds them, or none for a new stack.
  SmallVector<std::pair<Value, std::optional<unsigned>>> leaves;
};

} // namespace

/// Plans the recomputation of the marked ops of `pair`'s forward body: the
/// slice of the stacked values they compute, back to the carries and the
/// unmarked ops that depend on them, whose values come from stacks. What
/// depends on no carry (the iteration index, values from outside, slices of
/// them) is recomputed rather than stacked. Emits an error and fails when
/// the marks cannot take effect.
static FailureOr<BodyRecompute> planBodyRecompute(ScanPair &pair) {
  scf::ForOp loop = pair.forward;
  Block *body = loop.getBody();
  DenseSet<Operation *> onCarry;
  for (Operation &op : body->without_terminator())
    if (llvm::any_of(getReadValues(&op), [&](Value value) {
          auto arg = dyn_cast<BlockArgument>(value);
          if (arg && arg.getOwner() == body)
            return arg != loop.getInductionVar();
          return onCarry.contains(value.getDefiningOp());
        }))
      onCarry.insert(&op);

  BodyRecompute plan;
  SetVector<Operation *> slice;
  SetVector<Value> leaves;
  std::function<void(Value)> visit = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (auto arg = dyn_cast<BlockArgument>(value);
        arg && arg.getOwner() == body && arg != loop.getInductionVar()) {
      leaves.insert(value);
      return;
    }
    if (!def || def->getBlock() != body || slice.contains(def))
      return;
    if (!isRecomputedInBody(def) && onCarry.contains(def)) {
      leaves.insert(value);
      return;
    }
    slice.insert(def);
    for (Value read : getReadValues(def))
      visit(read);
  };
  for (auto [number, write] : llvm::enumerate(pair.stackWrites)) {
    Operation *def = write ? write.getSource().getDefiningOp() : nullptr;
    if (!def || def->getBlock() != body || !isRecomputedInBody(def))
      continue;
    plan.dropped.push_back(number);
    visit(write.getSource());
  }
  Operation *firstMark = getFirstMark(loop);
  for (unsigned number : plan.dropped)
    for (Operation *read : loop.getResult(number).getUsers())
      if (read->getResult(0).getType() !=
          pair.stackWrites[number].getSource().getType())
        return read->emitError()
               << "-remat-checkpoint-loops: the backward loop reads stack #"
               << number << " as " << read->getResult(0).getType()
               << ", not as the type of the marked op's value it holds";
  if (plan.dropped.empty())
    return firstMark->emitError()
           << "-remat-checkpoint-loops: the marked ops of the scan's body "
              "compute no value the scan stacks for its backward loop, so "
              "there is nothing to recompute per iteration";
  // The slice in body order, and where each leaf's slots come from.
  for (Operation &op : body->without_terminator())
    if (slice.contains(&op))
      plan.ops.insert(&op);
  for (Value leaf : leaves) {
    if (auto arg = dyn_cast<BlockArgument>(leaf);
        arg && pair.stackWrites[arg.getArgNumber() - 1])
      return firstMark->emitError()
             << "-remat-checkpoint-loops: the marked ops read stack #"
             << arg.getArgNumber() - 1 << " of the scan itself";
    std::optional<unsigned> stack;
    for (auto [number, write] : llvm::enumerate(pair.stackWrites))
      if (write && write.getSource() == leaf &&
          !llvm::is_contained(plan.dropped, number))
        stack = number;
    auto type = dyn_cast<RankedTensorType>(leaf.getType());
    if (!stack && (!type || !type.hasStaticShape()))
      return firstMark->emitError()
             << "-remat-checkpoint-loops: the marked ops read a value of type "
             << leaf.getType()
             << " that depends on the carries; only statically shaped "
                "tensors can be stacked for them";
    plan.leaves.push_back({leaf, stack});
  }
  return plan;
}

/// Rewrites `pair` as `plan` says: the forward loop no longer stacks the
/// dropped values and stacks the new leaves instead, and the backward loop
/// recomputes the dropped values per iteration from the slots of iteration
/// n - 1 - j. The loops and the clones get `remat.id = id` and
/// `remat.rerun_of = id`; the marks are dropped. Returns the new forward
/// loop.
static scf::ForOp recomputeBody(ScanPair &pair, const BodyRecompute &plan,
                                int64_t id) {
  scf::ForOp old = pair.forward;
  ScanRewriter rewriter(pair, /*k=*/1, id);
  OpBuilder &b = rewriter.b;
  Location loc = rewriter.loc;

  // The forward: the kept iter_args, then one new stack per new leaf.
  SmallVector<unsigned> kept;
  SmallVector<Value> inits;
  for (unsigned number = 0; number < old.getNumRegionIterArgs(); ++number)
    if (!llvm::is_contained(plan.dropped, number)) {
      kept.push_back(number);
      inits.push_back(old.getInitArgs()[number]);
    }
  SmallVector<Value> newLeaves;
  for (auto [leaf, stack] : plan.leaves)
    if (!stack) {
      auto type =
          getStackType(cast<RankedTensorType>(leaf.getType()), pair.trips, 0);
      inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                              type.getElementType()));
      newLeaves.push_back(leaf);
    }
  auto loop = scf::ForOp::create(b, loc, old.getLowerBound(),
                                 old.getUpperBound(), old.getStep(), inits);
  loop->setAttrs(old->getDiscardableAttrDictionary());
  loop->setAttr(RematDialect::kIdAttrName, b.getI64IntegerAttr(id));
  Block *body = loop.getBody();
  body->getOperations().splice(body->end(), old.getBody()->getOperations());
  // The old body's arguments become the new one's; a leaf that is a carry
  // is read through the new argument.
  IRMapping arguments;
  arguments.map(old.getInductionVar(), loop.getInductionVar());
  for (auto [position, number] : llvm::enumerate(kept))
    arguments.map(old.getRegionIterArgs()[number],
                  loop.getRegionIterArgs()[position]);
  for (auto [from, to] : arguments.getValueMap())
    from.replaceAllUsesWith(to);
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  b.setInsertionPoint(yield);
  SmallVector<Value> yielded;
  for (unsigned number : kept)
    yielded.push_back(yield.getOperand(number));
  for (auto [position, leaf] : llvm::enumerate(newLeaves))
    yielded.push_back(
        rewriter.writeSlot(arguments.lookupOrDefault(leaf),
                           loop.getRegionIterArgs()[kept.size() + position],
                           loop.getInductionVar()));
  scf::YieldOp::create(b, loc, yielded);
  yield.erase();
  SmallVector<Value> droppedValues;
  for (unsigned number : plan.dropped) {
    droppedValues.push_back(pair.stackWrites[number].getSource());
    pair.stackWrites[number].erase();
  }
  for (Operation &op : body->without_terminator()) {
    op.removeAttr(RematDialect::kSegmentAttrName);
    op.removeAttr(RematDialect::kPolicyAttrName);
  }

  // The backward: each iteration's slots at r = n - 1 - j, then the clones.
  scf::ForOp backward = pair.backward;
  b.setInsertionPointToStart(backward.getBody());
  Value at = arith::SubIOp::create(b, loc, rewriter.index(pair.trips - 1),
                                   backward.getInductionVar());
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), at);
  unsigned nextNew = kept.size();
  for (auto [leaf, stack] : plan.leaves) {
    Value source = stack
                       ? loop.getResult(llvm::find(kept, *stack) - kept.begin())
                       : loop.getResult(nextNew++);
    mapping.map(arguments.lookupOrDefault(leaf),
                rewriter.readSlot(source, at, leaf.getType()));
  }
  for (Operation *op : plan.ops) {
    Operation *copy = b.clone(*op, mapping);
    copy->setAttr(RematDialect::kRerunOfAttrName, b.getI64IntegerAttr(id));
  }
  // The backward's reads of the dropped stacks become the recomputed
  // values; the kept stacks and carries are the new loop's.
  for (auto [number, value] : llvm::zip_equal(plan.dropped, droppedValues)) {
    Value recomputed = mapping.lookup(value);
    for (Operation *read :
         llvm::make_early_inc_range(old.getResult(number).getUsers())) {
      read->getResult(0).replaceAllUsesWith(recomputed);
      read->erase();
    }
  }
  for (auto [position, number] : llvm::enumerate(kept))
    old.getResult(number).replaceAllUsesWith(loop.getResult(position));
  old.erase();
  pair.forward = loop;
  return loop;
}

SmallVector<scf::ForOp> remat::getForwardLoops(func::FuncOp function,
                                               BackwardOp backwardOp) {
  SmallVector<scf::ForOp> loops;
  for (Operation &op : function.getBody().front()) {
    if (&op == backwardOp.getOperation())
      break;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      loops.push_back(loop);
  }
  return loops;
}

/// The least `remat.id` no op of `function` has.
static int64_t getNextId(func::FuncOp function) {
  int64_t nextId = 0;
  function->walk([&](Operation *op) {
    if (auto id = op->getAttrOfType<IntegerAttr>(RematDialect::kIdAttrName))
      nextId = std::max(nextId, id.getInt() + 1);
  });
  return nextId;
}

unsigned remat::checkpointScans(func::FuncOp function, ChooseBlock choose,
                                bool remarks) {
  BackwardOp backwardOp = getBackwardOp(function.getBody());
  if (!backwardOp)
    return 0;
  int64_t nextId = getNextId(function);
  unsigned rewritten = 0;
  for (auto [position, loop] :
       llvm::enumerate(getForwardLoops(function, backwardOp))) {
    if (loop->hasAttr(RematDialect::kSegmentAttrName)) {
      if (remarks)
        loop.emitRemark() << "-remat-checkpoint-loops: the loop is in a "
                             "checkpoint segment, which recomputes it whole";
      continue;
    }
    if (loop->hasAttr(RematDialect::kIdAttrName)) {
      if (remarks)
        loop.emitRemark() << "-remat-checkpoint-loops: the scan's body "
                             "segments are recomputed per iteration; its "
                             "carries are not checkpointed on top of that";
      continue;
    }
    ScanPair pair;
    std::string why = matchScan(loop, backwardOp, pair);
    if (!why.empty()) {
      if (remarks)
        loop.emitRemark() << "-remat-checkpoint-loops: the loop is not a scan "
                             "with a reverse backward loop: "
                          << why;
      continue;
    }
    int64_t k = choose(pair.trips, position);
    if (k == 0) {
      if (remarks)
        loop.emitRemark() << "-remat-checkpoint-loops: the scan is left alone "
                             "(policy=budget)";
      continue;
    }
    if (pair.trips % k != 0) {
      if (remarks)
        loop.emitRemark() << "-remat-checkpoint-loops: " << k
                          << " does not divide the loop's " << pair.trips
                          << " iterations";
      continue;
    }
    int64_t stackBytes = 0, slotBytes = 0, carryBytes = 0;
    ScanRewriter rewriter(pair, k, nextId++);
    for (unsigned number : rewriter.stackNumbers) {
      stackBytes += getBytes(loop.getResultTypes()[number]);
      slotBytes += getBytes(loop.getResultTypes()[number]) / pair.trips;
    }
    for (unsigned number : rewriter.carryNumbers)
      carryBytes += getBytes(loop.getResultTypes()[number]);
    SmallVector<Value> checkpoints = rewriter.rewriteForward();
    rewriter.rewriteBackward(checkpoints);
    pair.backward.erase();
    loop.erase();
    ++rewritten;
    if (remarks)
      mlir::emitRemark(rewriter.loc)
          << "-remat-checkpoint-loops: a scan of " << pair.trips
          << " iterations saves its carries every " << k << " iterations ("
          << pair.trips / k << " checkpoints, " << pair.trips / k * carryBytes
          << " bytes) instead of its stacks (" << stackBytes
          << " bytes); the backward recomputes " << pair.trips
          << " iterations into stacks of " << k << " slots (" << k * slotBytes
          << " bytes)";
  }
  return rewritten;
}

/// Bytes of the stacks (iter_arg numbers `numbers`) of `loop`.
static int64_t getStackBytes(scf::ForOp loop, ArrayRef<unsigned> numbers) {
  int64_t bytes = 0;
  for (unsigned number : numbers)
    bytes += getBytes(loop.getResultTypes()[number]);
  return bytes;
}

LogicalResult remat::recomputeBodySegments(func::FuncOp function,
                                           bool remarks) {
  BackwardOp backwardOp = getBackwardOp(function.getBody());
  for (scf::ForOp loop : getForwardLoops(function, backwardOp)) {
    if (!getFirstMark(loop))
      continue;
    if (loop->hasAttr(RematDialect::kSegmentAttrName))
      return loop.emitError()
             << "-remat-checkpoint-loops: the loop's body has checkpoint "
                "marks, but the loop is in a checkpoint segment itself, "
                "which recomputes it whole";
    ScanPair pair;
    std::string why = matchScan(loop, backwardOp, pair);
    if (!why.empty())
      return loop.emitError()
             << "-remat-checkpoint-loops: the loop's body has checkpoint "
                "marks, but the loop is not a scan with a reverse backward "
                "loop: "
             << why;
    FailureOr<BodyRecompute> plan = planBodyRecompute(pair);
    if (failed(plan))
      return failure();
    int64_t before = getStackBytes(loop, plan->dropped);
    int64_t after = 0;
    for (auto [leaf, stack] : plan->leaves)
      if (!stack)
        after += getBytes(leaf.getType()) * pair.trips;
    size_t numOps = plan->ops.size();
    scf::ForOp rewritten = recomputeBody(pair, *plan, getNextId(function));
    if (remarks)
      rewritten.emitRemark()
          << "-remat-checkpoint-loops: the backward loop recomputes " << numOps
          << " ops of the scan's body per iteration; the forward "
          << "stacks " << after << " bytes instead of " << before;
  }
  return success();
}
