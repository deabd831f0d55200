//===- LibraryCalls.cpp - Matmuls and convolutions a library computes -----===//
//
// This file implements what the CPU's and CUDA's library calls share: the
// matmuls and convolutions on buffers the runtime's libraries compute, the
// matmul calls both targets make, and the declarations of the runtime's
// entry points.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/LibraryCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

using namespace mlir;
using namespace remat;

func::FuncOp remat::getOrDeclareRuntimeFunction(RewriterBase &rewriter,
                                                Operation *op, StringRef name,
                                                FunctionType type) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(rewriter, module.getLoc(), name, type);
  function.setPrivate();
  function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    rewriter.getUnitAttr());
  return function;
}

StringRef remat::getRuntimeTypeSuffix(Type inputType) {
  return inputType.isBF16()  ? "bf16"
         : inputType.isF16() ? "f16"
         : inputType.isF64() ? "f64"
                             : "f32";
}

unsigned remat::applyLibraryCallPatterns(Operation *root,
                                         RewritePatternSet &&patterns) {
  // Each pattern erases the linalg op it replaces, and no other.
  struct RewriteCounter : RewriterBase::Listener {
    void notifyOperationErased(Operation *op) override {
      count += isa<linalg::LinalgOp>(op);
    }
    unsigned count = 0;
  } counter;
  walkAndApplyPatterns(root, FrozenRewritePatternSet(std::move(patterns)),
                       &counter);
  return counter.count;
}

//===----------------------------------------------------------------------===//
// Matmuls
//===----------------------------------------------------------------------===//

/// The memref type every operand is cast to at the call: fully dynamic sizes
/// and strides, so one runtime entry point serves every shape and layout.
static MemRefType getDynamicMemRefType(Type elementType, int64_t rank) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(elementType.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(shape, elementType, layout);
}

/// The element type of a matmul's inputs the runtime multiplies: f32 with
/// an f32 result, bf16 or f16 (both inputs) accumulated into an f32 result
/// (autocast's products), or f64 with an f64 result (a float64 step's).
/// Null for anything else.
static Type getBlasInputType(linalg::LinalgOp op) {
  auto elementType = [&](unsigned index) {
    return cast<MemRefType>(op->getOperand(index).getType()).getElementType();
  };
  Type a = elementType(0), b = elementType(1), c = elementType(2);
  if (a != b)
    return {};
  if (c.isF64())
    return a.isF64() ? a : Type();
  if (!c.isF32() || !(a.isF32() || a.isBF16() || a.isF16()))
    return {};
  return a;
}

/// For each input of a (batch) matmul, whether it is read transposed: its
/// indexing map is the default one with the last two results swapped.
/// Fails if a map is neither, or the result's is not the default.
static FailureOr<SmallVector<bool, 2>>
getTransposedInputs(linalg::LinalgOp op) {
  SmallVector<AffineMap> defaults =
      isa<linalg::MatmulOp>(op.getOperation())
          ? linalg::MatmulOp::getDefaultIndexingMaps(op.getContext())
          : linalg::BatchMatmulOp::getDefaultIndexingMaps(op.getContext());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[2] != defaults[2])
    return failure();
  SmallVector<bool, 2> transposed;
  for (int64_t index : {0, 1}) {
    AffineMap map = defaults[index];
    SmallVector<AffineExpr> swapped(map.getResults());
    std::swap(swapped[swapped.size() - 2], swapped.back());
    if (maps[index] == map)
      transposed.push_back(false);
    else if (maps[index] ==
             AffineMap::get(map.getNumDims(), 0, swapped, op.getContext()))
      transposed.push_back(true);
    else
      return failure();
  }
  return transposed;
}

bool remat::isBlasMatmul(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() ||
      !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()))
    return false;
  FailureOr<SmallVector<bool, 2>> transposed = getTransposedInputs(op);
  if (failed(transposed))
    return false;
  return static_cast<bool>(getBlasInputType(op));
}

void remat::replaceMatmulWithCall(RewriterBase &rewriter, linalg::LinalgOp op,
                                  StringRef prefix) {
  bool batched = isa<linalg::BatchMatmulOp>(op.getOperation());
  int64_t rank = batched ? 3 : 2;
  Type inputType = getBlasInputType(op);
  std::string name = (Twine(prefix) + (batched ? "batch_matmul_" : "matmul_") +
                      getRuntimeTypeSuffix(inputType))
                         .str();
  MemRefType input = getDynamicMemRefType(inputType, rank);
  MemRefType result = getDynamicMemRefType(
      cast<MemRefType>(op->getOperand(2).getType()).getElementType(), rank);
  func::FuncOp callee = getOrDeclareRuntimeFunction(
      rewriter, op, name, rewriter.getFunctionType({input, input, result}, {}));
  rewriter.setInsertionPoint(op);
  // A transposed input is passed as a transposed view (strides swapped),
  // which the runtime hands to its GEMM as a transposed operand.
  SmallVector<bool, 2> transposed = *getTransposedInputs(op);
  SmallVector<Value> operands;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    Value value = operand;
    if (index < 2 && transposed[index]) {
      auto permutation = llvm::to_vector(llvm::seq<unsigned>(0, rank));
      std::swap(permutation[rank - 2], permutation[rank - 1]);
      value = memref::TransposeOp::create(
          rewriter, op.getLoc(), value,
          AffineMapAttr::get(
              AffineMap::getPermutationMap(permutation, op.getContext())));
    }
    Type elementType = cast<MemRefType>(value.getType()).getElementType();
    operands.push_back(memref::CastOp::create(
        rewriter, op.getLoc(), getDynamicMemRefType(elementType, rank), value));
  }
  func::CallOp::create(rewriter, op.getLoc(), callee, operands);
  rewriter.eraseOp(op);
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

/// Splits `expr` into a sum of dimensions times positive constants. Fails
/// on anything else (symbols, constants, floordiv, ...).
static LogicalResult
getLinearTerms(AffineExpr expr,
               SmallVectorImpl<std::pair<unsigned, int64_t>> &terms) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    terms.push_back({dim.getPosition(), 1});
    return success();
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return failure();
  if (binary.getKind() == AffineExprKind::Add)
    return success(succeeded(getLinearTerms(binary.getLHS(), terms)) &&
                   succeeded(getLinearTerms(binary.getRHS(), terms)));
  if (binary.getKind() != AffineExprKind::Mul)
    return failure();
  auto dim = dyn_cast<AffineDimExpr>(binary.getLHS());
  auto constant = dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (!dim || !constant || constant.getValue() <= 0)
    return failure();
  terms.push_back({dim.getPosition(), constant.getValue()});
  return success();
}

/// Returns true if the op's body is `out + a * b` on its two inputs, each
/// read as it is or widened (`arith.extf`: 2-byte inputs summed in f32).
static bool hasMultiplyAccumulateBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3)
    return false;
  Value a = body->getArgument(0), b = body->getArgument(1),
        out = body->getArgument(2);
  auto it = body->begin();
  // Leading extfs of the inputs: what the mulf reads in their place.
  unsigned widened = 0;
  while (auto ext = dyn_cast<arith::ExtFOp>(*it)) {
    if (ext.getIn() == a)
      a = ext.getResult();
    else if (ext.getIn() == b)
      b = ext.getResult();
    else
      return false;
    ++widened;
    ++it;
  }
  if (body->getOperations().size() != 3 + widened)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(*it);
  auto add = dyn_cast<arith::AddFOp>(*std::next(it));
  auto yield = dyn_cast<linalg::YieldOp>(body->back());
  if (!mul || !add || !yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != add.getResult())
    return false;
  bool mulReadsInputs = (mul.getLhs() == a && mul.getRhs() == b) ||
                        (mul.getLhs() == b && mul.getRhs() == a);
  bool addsToOut = (add.getLhs() == out && add.getRhs() == mul.getResult()) ||
                   (add.getRhs() == out && add.getLhs() == mul.getResult());
  return mulReadsInputs && addsToOut;
}

/// Returns true if `op` computes `out += a * b` on static buffers: all f32,
/// or bf16 or f16 inputs (both of one type) into an f32 output.
static bool isStaticF32MultiplyAccumulate(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !hasMultiplyAccumulateBody(op))
    return false;
  if (!llvm::all_of(op->getOperandTypes(), [](Type type) {
        auto memref = dyn_cast<MemRefType>(type);
        return memref && memref.hasStaticShape();
      }))
    return false;
  auto elementType = [&](unsigned index) {
    return cast<MemRefType>(op->getOperand(index).getType()).getElementType();
  };
  Type a = elementType(0), b = elementType(1);
  return elementType(2).isF32() && a == b &&
         (a.isF32() || a.isBF16() || a.isF16());
}

/// Returns the input whose map has compound results (oh * s + kh * d), if
/// it is the only map that is not a projected permutation.
static std::optional<unsigned> findImageOperand(ArrayRef<AffineMap> maps) {
  std::optional<unsigned> image;
  for (unsigned index : {0u, 1u}) {
    if (!maps[index].isProjectedPermutation()) {
      if (image)
        return std::nullopt;
      image = index;
    }
  }
  if (!image || !maps[2].isProjectedPermutation())
    return std::nullopt;
  return image;
}

namespace {

/// A compound result `a * otherScale + b * outputScale` of the image's map:
/// `a` read by the other input, `b` by the output.
struct SpatialPair {
  int64_t result;
  unsigned otherDim, outputDim;
  int64_t otherScale, outputScale;
};

} // namespace

/// Returns the image's compound results, two dimensions each, one read by
/// the other input and one by the output; fails unless there are one or two
/// and every other result is a single dimension.
static FailureOr<SmallVector<SpatialPair, 2>>
matchSpatialPairs(ArrayRef<AffineMap> maps, unsigned image) {
  unsigned other = 1 - image, output = 2;
  auto contains = [&](unsigned operand, unsigned dim) {
    return maps[operand].isFunctionOfDim(dim);
  };
  SmallVector<SpatialPair, 2> pairs;
  llvm::SmallDenseSet<unsigned> imageDims;
  for (auto [position, expr] : llvm::enumerate(maps[image].getResults())) {
    SmallVector<std::pair<unsigned, int64_t>> terms;
    if (failed(getLinearTerms(expr, terms)))
      return failure();
    for (auto [dim, scale] : terms)
      if (!imageDims.insert(dim).second)
        return failure();
    if (terms.size() == 1) {
      if (terms[0].second != 1)
        return failure();
      continue;
    }
    if (terms.size() != 2)
      return failure();
    auto [dimA, scaleA] = terms[0];
    auto [dimB, scaleB] = terms[1];
    if (contains(output, dimA))
      std::swap(dimA, dimB), std::swap(scaleA, scaleB);
    if (!contains(other, dimA) || contains(output, dimA) ||
        !contains(output, dimB) || contains(other, dimB))
      return failure();
    pairs.push_back({int64_t(position), dimA, dimB, scaleA, scaleB});
  }
  if (pairs.empty() || pairs.size() > 2)
    return failure();
  return pairs;
}

/// Labels the operands of `op` and the loop dimensions, strides and
/// dilations of the spatial pairs. Response or filter: either labelling
/// computes the same sums (the roles of N and C, and of strides and
/// dilations, swap with it); the response is taken to be the operand with
/// the larger spatial extent, so that the GEMM's columns run over the larger
/// output image.
static Convolution labelSpatialPairs(linalg::LinalgOp op, unsigned image,
                                     ArrayRef<SpatialPair> pairs) {
  unsigned other = 1 - image, output = 2;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto spatialExtent = [&](bool ofOutput) {
    int64_t extent = 1;
    for (const SpatialPair &pair : pairs)
      extent *= ranges[ofOutput ? pair.outputDim : pair.otherDim];
    return extent;
  };
  bool writesFilter = spatialExtent(false) > spatialExtent(true);

  Convolution conv;
  conv.image = image;
  conv.writesFilter = writesFilter;
  conv.response = writesFilter ? other : output;
  conv.filter = writesFilter ? output : other;
  conv.dims.fill(-1);
  conv.imageSpatial.fill(-1);
  conv.strides.fill(1);
  conv.dilations.fill(1);
  // A single spatial pair is the innermost one (a 1-D convolution).
  unsigned firstPair = 2 - pairs.size();
  for (auto [index, pair] : llvm::enumerate(pairs)) {
    unsigned slot = firstPair + index;
    bool responseIsOutput = !writesFilter;
    conv.imageSpatial[slot] = pair.result;
    conv.dims[kOH + slot] = responseIsOutput ? pair.outputDim : pair.otherDim;
    conv.dims[kKH + slot] = responseIsOutput ? pair.otherDim : pair.outputDim;
    conv.strides[slot] = responseIsOutput ? pair.outputScale : pair.otherScale;
    conv.dilations[slot] =
        responseIsOutput ? pair.otherScale : pair.outputScale;
  }
  return conv;
}

/// Gives every loop dimension of `op` that is not spatial its role, from
/// the operands it indexes; fails if one has none, a role has two, or a
/// dimension's iterator type disagrees with whether the output reads it.
static LogicalResult labelOtherDims(linalg::LinalgOp op,
                                    ArrayRef<AffineMap> maps,
                                    Convolution &conv) {
  auto contains = [&](unsigned operand, unsigned dim) {
    return maps[operand].isFunctionOfDim(dim);
  };
  llvm::SmallDenseSet<int64_t> spatialDims(conv.dims.begin() + kOH,
                                           conv.dims.end());
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned dim = 0, e = op.getNumLoops(); dim < e; ++dim) {
    bool inOutput = contains(2, dim);
    if ((iterators[dim] == utils::IteratorType::parallel) != inOutput)
      return failure();
    if (spatialDims.contains(dim))
      continue;
    bool inImage = contains(conv.image, dim),
         inFilter = contains(conv.filter, dim),
         inResponse = contains(conv.response, dim);
    ConvolutionRole role;
    if (inImage && inFilter && inResponse)
      role = kG;
    else if (inImage && inResponse && !inFilter)
      role = kN;
    else if (inFilter && inResponse && !inImage)
      role = kF;
    else if (inImage && inFilter && !inResponse)
      role = kC;
    else
      return failure();
    if (conv.dims[role] != -1)
      return failure();
    conv.dims[role] = dim;
  }
  return success();
}

/// Returns true if the image holds every position the sums read: linalg's
/// verifier checks static shapes, but not every layout of every op it
/// accepts.
static bool imageHoldsWindows(linalg::LinalgOp op, const Convolution &conv) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  ArrayRef<int64_t> imageShape =
      cast<MemRefType>(op->getOperand(conv.image).getType()).getShape();
  for (unsigned slot : {0u, 1u}) {
    if (conv.imageSpatial[slot] < 0)
      continue;
    int64_t last = (ranges[conv.dims[kOH + slot]] - 1) * conv.strides[slot] +
                   (ranges[conv.dims[kKH + slot]] - 1) * conv.dilations[slot];
    if (last >= imageShape[conv.imageSpatial[slot]])
      return false;
  }
  return true;
}

FailureOr<Convolution> remat::matchConvolution(linalg::LinalgOp op) {
  if (!isStaticF32MultiplyAccumulate(op))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<unsigned> image = findImageOperand(maps);
  if (!image)
    return failure();
  FailureOr<SmallVector<SpatialPair, 2>> pairs =
      matchSpatialPairs(maps, *image);
  if (failed(pairs))
    return failure();
  Convolution conv = labelSpatialPairs(op, *image, *pairs);
  if (failed(labelOtherDims(op, maps, conv)) || !imageHoldsWindows(op, conv))
    return failure();
  conv.inputType = cast<MemRefType>(op.getDpsInputOperand(0)->get().getType())
                       .getElementType();
  return conv;
}
