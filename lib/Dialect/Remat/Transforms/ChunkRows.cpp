//===- ChunkRows.cpp - Row-independent regions in chunks of rows ----------===//
//
// This file implements -remat-chunk-rows: a region of ops that are
// independent along the rows of a large matmul's result (a language model's
// logits, their log-softmax, the loss's gradient and the products it feeds)
// becomes one scf.for over blocks of rows, so that one block of each large
// value lives at a time, with every output bit-identical to the unchunked
// step on the CPU's native GEMM.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematDialect.h"
#include "remat/Dialect/Remat/IR/RematOps.h"
#include "remat/Dialect/Remat/Transforms/Passes.h"

#include "GemmOrder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATCHUNKROWSPASS
#include "remat/Dialect/Remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// How a value of the region is indexed by the rows: along its first
/// dimension, along its second (a row block's transpose), or not at all (a
/// product summed over the rows, carried from chunk to chunk).
enum class Kind { Row, RowT, Sum };

/// How an op of the region reads an operand: a row block of it, all of it,
/// a row block's transpose (from the region), or the carried sum.
enum class Role { Row, Whole, RowT, SumInit };

/// The region being grown around one seed: its ops, the kind of each of
/// their tensor results, and for each op the role of each operand (the
/// op's operands, then the tensors its regions read from above).
struct ChunkRegion {
  int64_t rows;
  llvm::SetVector<Operation *> ops;
  DenseMap<Value, Kind> kinds;
  DenseMap<Operation *, SmallVector<std::pair<Value, Role>>> roles;
};

bool hasRematAttr(Operation *op) {
  return llvm::any_of(op->getAttrs(), [](NamedAttribute attr) {
    return attr.getName().getValue().starts_with("remat.");
  });
}

/// A statically shaped tensor whose first dimension is `rows`.
bool isRowType(Type type, int64_t rows) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getRank() >= 1 &&
         tensor.getDimSize(0) == rows;
}

int64_t getBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() *
         std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

/// `type` with `rows` rows in dimension `dim`.
RankedTensorType withRows(Type type, unsigned dim, int64_t rows) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim] = rows;
  return tensor.clone(shape);
}

/// The offsets, sizes and strides of rows [iv, iv + chunkRows) of a tensor
/// of `type`, all of its other dimensions.
struct RowBlock {
  SmallVector<OpFoldResult> offsets, sizes, strides;

  RowBlock(OpBuilder &builder, RankedTensorType type, Value iv,
           int64_t chunkRows)
      : offsets(type.getRank(), builder.getIndexAttr(0)),
        strides(type.getRank(), builder.getIndexAttr(1)) {
    offsets[0] = iv;
    for (int64_t size : type.getShape())
      sizes.push_back(builder.getIndexAttr(size));
    sizes[0] = builder.getIndexAttr(chunkRows);
  }
};

/// Whether a float sum along the innermost loop of `op` keeps its order in
/// a chunk: the CPU lowering splits such a sum into vector lanes only when
/// the lanes divide its length, and only when its output is small, which a
/// chunk's may be where the whole one is not. An odd length is never split;
/// a maximum or minimum gives the same bits in any order.
bool keepsSumOrder(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.empty() || iterators.back() != utils::IteratorType::reduction)
    return true;
  if (llvm::none_of(op.getDpsInits(), [](Value init) {
        return isa<FloatType>(getElementTypeOrSelf(init.getType()));
      }))
    return true;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  if (llvm::all_of(yield.getValues(), [](Value value) {
        return isa_and_nonnull<arith::MaximumFOp, arith::MinimumFOp,
                               arith::MaxNumFOp, arith::MinNumFOp>(
            value.getDefiningOp());
      }))
    return true;
  int64_t length = op.getStaticLoopRanges().back();
  return !ShapedType::isDynamic(length) && length % 2 == 1;
}

/// The roles of the operands of `op` if it computes each row of its results
/// from the same rows of its row operands, else failure. `region` gives the
/// kinds of the values already in the region; `reason` says why not.
FailureOr<SmallVector<std::pair<Value, Role>>>
getRowRoles(Operation *op, const ChunkRegion &region, int64_t chunk,
            std::string &reason) {
  int64_t rows = region.rows;
  SmallVector<std::pair<Value, Role>> roles;
  auto kindOf = [&](Value value) -> std::optional<Kind> {
    auto it = region.kinds.find(value);
    if (it == region.kinds.end())
      return std::nullopt;
    return it->second;
  };
  // An operand read as a row block must be a row value of the region or a
  // row-typed value from outside.
  auto addRow = [&](Value value) {
    std::optional<Kind> kind = kindOf(value);
    if ((kind && *kind != Kind::Row) || !isRowType(value.getType(), rows))
      return false;
    roles.push_back({value, Role::Row});
    return true;
  };
  auto addWhole = [&](Value value) {
    if (kindOf(value))
      return false;
    roles.push_back({value, Role::Whole});
    return true;
  };
  if (hasRematAttr(op) || (op->getNumRegions() == 0 && !isMemoryEffectFree(op)))
    return failure();
  // A row block's transpose is the one op whose result is not rows.
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    if (transpose.getPermutation() != ArrayRef<int64_t>{1, 0} ||
        kindOf(transpose.getInput()) != Kind::Row ||
        !isa<tensor::EmptyOp>(transpose.getInit().getDefiningOp()))
      return failure();
    roles.push_back({transpose.getInput(), Role::Row});
    roles.push_back({transpose.getInit(), Role::Whole});
    return roles;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp && !linalgOp.hasPureTensorSemantics())
    return failure();
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
    if (matmul.getIndexingMapsArray() !=
        linalg::MatmulOp::getDefaultIndexingMaps(op->getContext()))
      return failure();
    Value a = matmul.getInputs()[0], b = matmul.getInputs()[1],
          c = matmul.getOutputs()[0];
    auto cType = cast<RankedTensorType>(c.getType());
    auto aType = cast<RankedTensorType>(a.getType());
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1),
            k = aType.getDimSize(1);
    if (kindOf(a) == Kind::RowT) {
      // C += A^T B over the rows: a sum carried from chunk to chunk. Each
      // chunk must add whole k blocks of the native kernel, in order, and
      // neither product may be cut along k by the runtime.
      if (!cType.getElementType().isF32() || kindOf(c) ||
          !isRowType(b.getType(), rows) ||
          (kindOf(b) && kindOf(b) != Kind::Row))
        return failure();
      int64_t depth = runtime::getSgemmBlockDepth(rows);
      if (chunk % depth != 0 || runtime::getSgemmBlockDepth(chunk) != depth ||
          runtime::isSplitAlongDepth(m, n, rows) ||
          runtime::isSplitAlongDepth(m, n, chunk)) {
        reason = "a product summed over the rows would add its terms in "
                 "another order in chunks of " +
                 std::to_string(chunk) + " rows";
        return failure();
      }
      roles.push_back({a, Role::RowT});
      roles.push_back({b, Role::Row});
      roles.push_back({c, Role::SumInit});
      return roles;
    }
    if (runtime::isSplitAlongDepth(m, n, k) !=
        runtime::isSplitAlongDepth(chunk, n, k)) {
      reason = "the runtime would cut a chunk's product along k";
      return failure();
    }
    if (!addRow(a) || !addWhole(b) || !addRow(c))
      return failure();
    return roles;
  }

  if (op->getNumResults() == 0 ||
      !llvm::all_of(op->getResultTypes(),
                    [&](Type type) { return isRowType(type, rows); }))
    return failure();

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return failure();
    return roles;
  }
  if (isa<tensor::EmptyOp>(op))
    return roles;
  if (auto reshape = dyn_cast<tensor::ReshapeOp>(op)) {
    // Row-major: equal first dimensions keep each row's elements together.
    if (!addRow(reshape.getSource()))
      return failure();
    roles.push_back({reshape.getShape(), Role::Whole});
    return roles;
  }
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumRegions() == 0) {
    for (Value operand : op->getOperands()) {
      bool ok = isa<RankedTensorType>(operand.getType())
                    ? cast<ShapedType>(operand.getType()).getShape() ==
                              cast<ShapedType>(op->getResult(0).getType())
                                  .getShape() &&
                          addRow(operand)
                    : addWhole(operand);
      if (!ok)
        return failure();
    }
    return roles;
  }

  // Any other linalg op: its first loop is parallel and is the first
  // dimension of every operand that it indexes at all.
  if (!linalgOp)
    return failure();
  MLIRContext *context = op->getContext();
  AffineExpr d0 = getAffineDimExpr(0, context);
  if (linalgOp.getNumLoops() == 0 ||
      linalgOp.getIteratorTypesArray()[0] != utils::IteratorType::parallel)
    return failure();
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    bool readsRows = map.getNumResults() > 0 && map.getResult(0) == d0;
    bool usesRows = llvm::any_of(
        map.getResults(), [&](AffineExpr e) { return e.isFunctionOfDim(0); });
    bool isInit = linalgOp.isDpsInit(&operand);
    if (readsRows && llvm::count_if(map.getResults(), [&](AffineExpr e) {
                       return e.isFunctionOfDim(0);
                     }) == 1) {
      if (!addRow(operand.get()))
        return failure();
    } else if (usesRows || isInit || !addWhole(operand.get())) {
      return failure();
    }
  }
  if (!keepsSumOrder(linalgOp)) {
    reason = "a float sum along a row of even length may be split into "
             "vector lanes in a chunk and not in the whole";
    return failure();
  }
  // The body may read a tensor from above at the current row (linalg.index
  // 0 as the first index: the tensor is sliced with the rows), or at indices
  // that do not depend on the row; linalg.index 0 has no other use.
  DenseMap<Value, bool> captured;
  bool ok = true;
  op->walk([&](linalg::IndexOp index) {
    if (index.getDim() != 0)
      return;
    for (OpOperand &use : index->getUses()) {
      auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
      if (!extract || use.getOperandNumber() != 1 ||
          op->getRegion(0).isAncestor(extract.getTensor().getParentRegion()))
        ok = false;
    }
  });
  if (!ok)
    return failure();
  SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  for (Value value : above) {
    if (!isa<RankedTensorType>(value.getType())) {
      if (kindOf(value))
        return failure();
      continue;
    }
    std::optional<bool> atRow;
    for (OpOperand &use : value.getUses()) {
      if (!op->isProperAncestor(use.getOwner()))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
      if (!extract || use.getOperandNumber() != 0)
        return failure();
      auto index =
          extract.getIndices().empty()
              ? linalg::IndexOp()
              : extract.getIndices()[0].getDefiningOp<linalg::IndexOp>();
      bool thisAtRow = index && index.getDim() == 0;
      if (atRow && *atRow != thisAtRow)
        return failure();
      atRow = thisAtRow;
    }
    if (!atRow)
      continue;
    if (*atRow ? !addRow(value) : !addWhole(value))
      return failure();
  }
  return roles;
}

/// The top-level op (in the function's body or the backward region's
/// block) that holds `op`, or null.
Operation *getTopLevel(Operation *op, Block *body, Block *backward) {
  if (Operation *top = body->findAncestorOpInBlock(*op))
    if (top->getBlock() == body && !isa<BackwardOp>(top))
      return top;
  if (!backward)
    return nullptr;
  return backward->findAncestorOpInBlock(*op);
}

struct RematChunkRowsPass
    : remat::impl::RematChunkRowsPassBase<RematChunkRowsPass> {
  using RematChunkRowsPassBase::RematChunkRowsPassBase;

  void runOnOperation() override;

private:
  void grow(ChunkRegion &region, Block *body, Block *backward,
            std::string &reason);
  LogicalResult chunk(ChunkRegion &region, BackwardOp backward,
                      std::string &reason);
};

/// A tensor.reshape of a tensor.reshape back to the original type is the
/// original: the exporter reshapes [N, V] to [B, T, V] and back.
void foldReshapePairs(func::FuncOp function) {
  SmallVector<tensor::ReshapeOp> pairs;
  function.walk([&](tensor::ReshapeOp reshape) {
    auto inner = reshape.getSource().getDefiningOp<tensor::ReshapeOp>();
    // A recomputed pair stays as its original is (-remat-verify).
    if (inner && inner.getSource().getType() == reshape.getType() &&
        !hasRematAttr(reshape) && !hasRematAttr(inner))
      pairs.push_back(reshape);
  });
  for (tensor::ReshapeOp reshape : pairs) {
    auto inner = reshape.getSource().getDefiningOp<tensor::ReshapeOp>();
    reshape.replaceAllUsesWith(inner.getSource());
    reshape.erase();
    if (inner->use_empty())
      inner.erase();
  }
}

void RematChunkRowsPass::grow(ChunkRegion &region, Block *body, Block *backward,
                              std::string &reason) {
  auto add = [&](Operation *op, SmallVector<std::pair<Value, Role>> roles) {
    region.ops.insert(op);
    region.roles[op] = std::move(roles);
    for (Value result : op->getResults()) {
      Kind kind = Kind::Row;
      if (isa<linalg::TransposeOp>(op))
        kind = Kind::RowT;
      else if (llvm::any_of(region.roles[op], [](auto &role) {
                 return role.second == Role::SumInit;
               }))
        kind = Kind::Sum;
      region.kinds[result] = kind;
    }
  };
  bool changed = true;
  while (changed) {
    changed = false;
    // Users of the region's values.
    for (size_t i = 0; i < region.ops.size(); ++i) {
      for (Value result : region.ops[i]->getResults()) {
        if (region.kinds.lookup(result) == Kind::Sum)
          continue;
        for (Operation *user : result.getUsers()) {
          Operation *top = getTopLevel(user, body, backward);
          if (!top || region.ops.contains(top))
            continue;
          std::string why;
          auto roles = getRowRoles(top, region, chunkRows, why);
          if (!why.empty() && reason.empty())
            reason = why;
          if (failed(roles))
            continue;
          add(top, std::move(*roles));
          changed = true;
        }
      }
    }
    // Producers of row operands read by nothing outside the region.
    for (size_t i = 0; i < region.ops.size(); ++i) {
      for (auto [value, role] :
           SmallVector<std::pair<Value, Role>>(region.roles[region.ops[i]])) {
        Operation *producer = value.getDefiningOp();
        if (role != Role::Row || region.kinds.count(value) || !producer ||
            getTopLevel(producer, body, backward) != producer)
          continue;
        bool onlyRegion = llvm::all_of(producer->getUsers(), [&](Operation *u) {
          return region.ops.contains(getTopLevel(u, body, backward));
        });
        if (!onlyRegion)
          continue;
        std::string why;
        auto roles = getRowRoles(producer, region, chunkRows, why);
        if (failed(roles))
          continue;
        add(producer, std::move(*roles));
        changed = true;
      }
    }
  }
}

LogicalResult RematChunkRowsPass::chunk(ChunkRegion &region,
                                        BackwardOp backward,
                                        std::string &reason) {
  func::FuncOp function = getOperation();
  Block *body = &function.getBody().front();
  Block *backwardBlock = backward ? &backward.getBody().front() : nullptr;
  llvm::SetVector<Operation *> &ops = region.ops;
  bool reachesBackward = llvm::any_of(
      ops, [&](Operation *op) { return op->getBlock() == backwardBlock; });
  Block *target = reachesBackward ? backwardBlock : body;

  // Program order: the forward, then the backward region.
  auto position = [&](Operation *op) { return op->getBlock() == body ? 0 : 1; };
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered, [&](Operation *a, Operation *b) {
    if (position(a) != position(b))
      return position(a) < position(b);
    return a->isBeforeInBlock(b);
  });

  // One value from outside is read either as rows or whole: the loop maps
  // it to one value.
  DenseMap<Value, Role> outsideRoles;
  for (Operation *op : ordered)
    for (auto &[value, role] : region.roles[op]) {
      if (region.kinds.count(value) || role == Role::SumInit)
        continue;
      auto [it, inserted] = outsideRoles.try_emplace(value, role);
      if (!inserted && it->second != role) {
        reason = "a value from outside is read both as rows and whole";
        return failure();
      }
    }

  // What the region reads (its ancestors) and what reads it (its
  // dependents), among the top-level ops; the loop cannot sit between the
  // two if they meet.
  auto operandsOf = [&](Operation *op) {
    SmallVector<Value> values(op->getOperands());
    SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    values.append(above.begin(), above.end());
    return values;
  };
  llvm::SetVector<Operation *> ancestors, dependents;
  SmallVector<Operation *> worklist(ordered);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value value : operandsOf(op)) {
      Operation *producer = value.getDefiningOp();
      if (!producer)
        continue;
      Operation *top = getTopLevel(producer, body, backwardBlock);
      if (top && !ops.contains(top) && ancestors.insert(top))
        worklist.push_back(top);
    }
  }
  SmallVector<Value> escapes;
  for (Operation *op : ordered)
    for (Value result : op->getResults()) {
      bool escapes_ = false;
      for (Operation *user : result.getUsers()) {
        Operation *top = getTopLevel(user, body, backwardBlock);
        if (top && ops.contains(top))
          continue;
        escapes_ = true;
        if (top && dependents.insert(top))
          worklist.push_back(top);
      }
      if (!escapes_ && region.kinds[result] != Kind::Sum)
        continue;
      if (region.kinds[result] == Kind::RowT) {
        reason = "a transposed row block is read outside the region";
        return failure();
      }
      if (region.kinds[result] == Kind::Row &&
          getBytes(result.getType()) >= minBytes) {
        reason = "a large row value is read outside the region";
        return failure();
      }
      escapes.push_back(result);
    }
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        Operation *top = getTopLevel(user, body, backwardBlock);
        if (top && !ops.contains(top) && dependents.insert(top))
          worklist.push_back(top);
      }
  }
  for (Operation *op : dependents)
    if (ancestors.contains(op)) {
      reason = "an op outside the region reads it and feeds it";
      return failure();
    }
  // Ops that move: ancestors in the target block after the loop's place go
  // before it; dependents before the loop's place (in the forward, when
  // the loop is in the backward region) go after it.
  Operation *first = *llvm::find_if(
      ordered, [&](Operation *op) { return op->getBlock() == target; });
  SmallVector<Operation *> hoisted, sunk;
  for (Operation &op : *target)
    if (ancestors.contains(&op) && first->isBeforeInBlock(&op))
      hoisted.push_back(&op);
  for (Block *block : {body, backwardBlock}) {
    if (!block)
      continue;
    for (Operation &op : *block)
      if (dependents.contains(&op) && !op.hasTrait<OpTrait::IsTerminator>() &&
          !isa<BackwardOp>(op) &&
          ((block == target && op.isBeforeInBlock(first)) ||
           (block == body && target == backwardBlock &&
            op.isBeforeInBlock(backward))))
        sunk.push_back(&op);
  }
  // Ops that move within their block keep their attributes; a forward op
  // that moves into the backward region must have none of remat's. A
  // barrier's effect is on a resource of its own, which only keeps it from
  // being merged: it may move (a recomputed input of the region's products).
  for (Operation *op : llvm::concat<Operation *>(hoisted, sunk))
    if ((!isMemoryEffectFree(op) && !isa<BarrierOp>(op)) ||
        (op->getBlock() != target && hasRematAttr(op))) {
      reason = "'" + op->getName().getStringRef().str() +
               "' would move, but it has memory effects or remat's "
               "attributes";
      return failure();
    }
  // The loop, where the region's first op in the target block was.
  for (Operation *op : hoisted)
    op->moveBefore(first);
  OpBuilder builder(first);
  Location loc = first->getLoc();
  int64_t rows = region.rows;
  SmallVector<Value> inits;
  for (Value escape : escapes) {
    if (region.kinds[escape] == Kind::Sum) {
      for (auto &[value, role] : region.roles[escape.getDefiningOp()])
        if (role == Role::SumInit)
          inits.push_back(value);
      continue;
    }
    auto type = cast<RankedTensorType>(escape.getType());
    inits.push_back(tensor::EmptyOp::create(builder, loc, type.getShape(),
                                            type.getElementType()));
  }
  Value lower = arith::ConstantIndexOp::create(builder, loc, 0);
  Value upper = arith::ConstantIndexOp::create(builder, loc, rows);
  Value step = arith::ConstantIndexOp::create(builder, loc, chunkRows);
  auto loop = scf::ForOp::create(builder, loc, lower, upper, step, inits);
  builder.setInsertionPointToStart(loop.getBody());
  Value iv = loop.getInductionVar();
  IRMapping mapping;
  DenseMap<Value, Value> slices;
  auto rowBlock = [&](Value value) -> Value {
    if (Value mapped = mapping.lookupOrNull(value))
      return mapped;
    Value &slice = slices[value];
    if (slice)
      return slice;
    auto type = cast<RankedTensorType>(value.getType());
    RowBlock rows(builder, type, iv, chunkRows);
    slice = tensor::ExtractSliceOp::create(
        builder, loc, withRows(type, 0, chunkRows), value, rows.offsets,
        rows.sizes, rows.strides);
    return slice;
  };
  DenseMap<Value, unsigned> escapeIndex;
  for (auto [i, escape] : llvm::enumerate(escapes))
    escapeIndex[escape] = i;
  for (Operation *op : ordered) {
    for (auto &[value, role] : region.roles[op]) {
      if (role == Role::Row && !region.kinds.count(value))
        mapping.map(value, rowBlock(value));
      else if (role == Role::SumInit)
        for (Value result : op->getResults())
          mapping.map(value, loop.getRegionIterArgs()[escapeIndex[result]]);
    }
    Operation *clone = nullptr;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = cast<DenseElementsAttr>(constant.getValue());
      auto type = withRows(constant.getType(), 0, chunkRows);
      clone = arith::ConstantOp::create(
          builder, constant.getLoc(), type,
          DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
    } else if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      auto type = withRows(transpose.getInit().getType(), 1, chunkRows);
      Value init = tensor::EmptyOp::create(
          builder, transpose.getLoc(), type.getShape(), type.getElementType());
      clone = linalg::TransposeOp::create(builder, transpose.getLoc(),
                                          mapping.lookup(transpose.getInput()),
                                          init, transpose.getPermutation());
    } else if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      auto type = withRows(empty.getType(), 0, chunkRows);
      clone = tensor::EmptyOp::create(builder, empty.getLoc(), type.getShape(),
                                      type.getElementType());
    } else if (auto reshape = dyn_cast<tensor::ReshapeOp>(op)) {
      auto type = withRows(reshape.getType(), 0, chunkRows);
      auto shapeType = cast<RankedTensorType>(reshape.getShape().getType());
      SmallVector<Attribute> extents;
      for (int64_t size : type.getShape())
        extents.push_back(IntegerAttr::get(shapeType.getElementType(), size));
      Value shape =
          arith::ConstantOp::create(builder, reshape.getLoc(), shapeType,
                                    DenseElementsAttr::get(shapeType, extents));
      clone =
          tensor::ReshapeOp::create(builder, reshape.getLoc(), type,
                                    mapping.lookup(reshape.getSource()), shape);
    } else {
      clone = builder.clone(*op, mapping);
      for (auto [original, result] :
           llvm::zip_equal(op->getResults(), clone->getResults())) {
        Kind kind = region.kinds[original];
        if (kind == Kind::Row)
          result.setType(withRows(original.getType(), 0, chunkRows));
        else if (kind == Kind::RowT)
          result.setType(withRows(original.getType(), 1, chunkRows));
      }
    }
    mapping.map(op->getResults(), clone->getResults());
  }
  SmallVector<Value> yielded;
  for (auto [escape, carried] :
       llvm::zip_equal(escapes, loop.getRegionIterArgs())) {
    Value chunkValue = mapping.lookup(escape);
    if (region.kinds[escape] == Kind::Sum) {
      yielded.push_back(chunkValue);
      continue;
    }
    RowBlock rows(builder, cast<RankedTensorType>(escape.getType()), iv,
                  chunkRows);
    yielded.push_back(tensor::InsertSliceOp::create(builder, loc, chunkValue,
                                                    carried, rows.offsets,
                                                    rows.sizes, rows.strides));
  }
  scf::YieldOp::create(builder, loc, yielded);

  for (auto [escape, result] : llvm::zip_equal(escapes, loop.getResults()))
    escape.replaceUsesWithIf(result, [&](OpOperand &use) {
      Operation *top = getTopLevel(use.getOwner(), body, backwardBlock);
      return !top || !ops.contains(top);
    });
  for (Operation *op : llvm::reverse(sunk))
    op->moveAfter(loop);
  int64_t forwardOps = llvm::count_if(
      ordered, [&](Operation *op) { return op->getBlock() == body; });
  for (Operation *op : llvm::reverse(ordered))
    op->erase();
  numRegions++;
  numChunkedOps += ordered.size();

  // Forward values that moved into the backward region and are read after
  // it (the loss the step returns) become results of remat.backward.
  if (target == backwardBlock) {
    SmallVector<Value> moved;
    for (Operation *op : sunk)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !backward->isAncestor(user);
            }))
          moved.push_back(result);
    if (!moved.empty()) {
      YieldOp yield = backward.getYield();
      SmallVector<Value> values(yield.getOperands());
      values.append(moved);
      SmallVector<Type> types(backward.getResultTypes());
      for (Value value : moved)
        types.push_back(value.getType());
      OpBuilder outer(backward);
      auto widened = BackwardOp::create(outer, backward.getLoc(), types);
      widened->setAttrs(backward->getAttrs());
      widened.getBody().takeBody(backward.getBody());
      yield->setOperands(values);
      for (auto [old, now] :
           llvm::zip(backward.getResults(), widened.getResults()))
        old.replaceAllUsesWith(now);
      for (auto [i, value] : llvm::enumerate(moved))
        value.replaceUsesWithIf(widened.getResult(backward.getNumResults() + i),
                                [&](OpOperand &use) {
                                  return !widened->isAncestor(use.getOwner());
                                });
      backward.erase();
      backward = widened;
    }
  }

  // At the loop's location, without printing the loop (a real-size one is
  // thousands of lines).
  mlir::emitRemark(loop.getLoc())
      << "chunk-rows: " << ordered.size() << " ops (" << forwardOps
      << " of the forward) over " << rows << " rows in chunks of "
      << int64_t(chunkRows) << ", " << escapes.size()
      << " results out of the loop";
  return success();
}

void RematChunkRowsPass::runOnOperation() {
  func::FuncOp function = getOperation();
  if (function.isExternal())
    return;
  if (chunkRows <= 0) {
    function.emitError("chunk-rows must be positive, got ")
        << static_cast<int64_t>(chunkRows);
    return signalPassFailure();
  }
  foldReshapePairs(function);
  Block *body = &function.getBody().front();

  // Seeds: the largest matmuls first.
  SmallVector<linalg::MatmulOp> seeds;
  auto collect = [&](Block *block) {
    for (auto matmul : block->getOps<linalg::MatmulOp>())
      if (isa<RankedTensorType>(matmul.getResultTypes()[0]) &&
          cast<RankedTensorType>(matmul.getResultTypes()[0]).hasStaticShape() &&
          getBytes(matmul.getResultTypes()[0]) >= minBytes)
        seeds.push_back(matmul);
  };
  collect(body);
  if (BackwardOp backward = getBackwardOp(function.getBody()))
    collect(&backward.getBody().front());
  // Largest first; equal sizes in program order (the sort is stable).
  SmallVector<std::pair<int64_t, unsigned>> order;
  for (auto [i, seed] : llvm::enumerate(seeds))
    order.push_back({-getBytes(seed.getResultTypes()[0]), i});
  llvm::sort(order);
  seeds = llvm::to_vector(
      llvm::map_range(order, [&](auto entry) { return seeds[entry.second]; }));

  DenseSet<Operation *> claimed;
  for (linalg::MatmulOp seed : seeds) {
    if (claimed.contains(seed))
      continue;
    BackwardOp backward = getBackwardOp(function.getBody());
    Block *backwardBlock = backward ? &backward.getBody().front() : nullptr;
    auto type = cast<RankedTensorType>(seed.getResultTypes()[0]);
    ChunkRegion region;
    region.rows = type.getDimSize(0);
    if (region.rows % chunkRows != 0 || region.rows <= chunkRows)
      continue;
    std::string reason;
    auto roles = getRowRoles(seed, region, chunkRows, reason);
    if (failed(roles)) {
      if (!reason.empty())
        mlir::emitRemark(seed.getLoc())
            << "chunk-rows: not chunked: " << reason;
      continue;
    }
    region.ops.insert(seed);
    region.roles[seed] = *roles;
    region.kinds[seed.getResult(0)] = Kind::Row;
    std::string limit;
    grow(region, body, backwardBlock, limit);
    for (Operation *op : region.ops)
      claimed.insert(op);
    // Chunking pays only if a large row value stays inside the loop.
    bool large = llvm::any_of(region.ops, [&](Operation *op) {
      return llvm::any_of(op->getResults(), [&](Value result) {
        return region.kinds[result] != Kind::Sum &&
               getBytes(result.getType()) >= minBytes &&
               llvm::all_of(result.getUsers(), [&](Operation *user) {
                 return region.ops.contains(
                     getTopLevel(user, body, backwardBlock));
               });
      });
    });
    if (!large)
      continue;
    if (failed(chunk(region, backward, reason))) {
      InFlightDiagnostic remark = mlir::emitRemark(seed.getLoc())
                                  << "chunk-rows: not chunked: " << reason;
      if (!limit.empty())
        remark << " (the region stops where " << limit << ")";
    }
  }
}

} // namespace
