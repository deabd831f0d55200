//===- ConvToBlas.cpp - Convolutions on buffers as runtime calls ----------===//
//
// This file implements -remat-conv-to-blas: f32 convolutions on buffers, the
// forward form and the filter-gradient form, named or generic, become calls
// into the runtime's convolution kernels (im2col tiles into sgemm, or a
// direct loop nest for depthwise shapes).
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "remat-conv-to-blas"

namespace remat {
#define GEN_PASS_DEF_REMATCONVTOBLASPASS
#include "remat/Conversion/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// The roles a loop dimension of a 2-D convolution plays. The image X is
/// indexed [N, G, C, H, W], the filter W [G, F, C, KH, KW] and the response
/// Y [N, G, F, OH, OW], with H = OH * strideH + KH * dilationH (and so for
/// W); Y = conv(X, W) sums over C, KH and KW, the filter gradient
/// W = conv(X, Y) over N, OH and OW. A role no loop dimension plays has
/// extent 1.
enum Role : unsigned { kN, kG, kF, kC, kOH, kOW, kKH, kKW, kNumRoles };

/// The roles of each operand's view, in the order the runtime reads them.
constexpr Role kImageRoles[] = {kN, kG, kC, kOH, kOW};
constexpr Role kFilterRoles[] = {kG, kF, kC, kKH, kKW};
constexpr Role kResponseRoles[] = {kN, kG, kF, kOH, kOW};

/// A linalg op recognised as a 2-D convolution: which operand is the image,
/// the filter and the response, and which loop dimension plays each role.
struct Convolution {
  unsigned image, filter, response;
  /// The loop dimension of each role, or -1.
  std::array<int64_t, kNumRoles> dims;
  /// The result of the image's map that reads each spatial pair (0: H,
  /// 1: W), or -1 for a missing pair.
  std::array<int64_t, 2> imageSpatial;
  std::array<int64_t, 2> strides, dilations;
  /// True if the op writes the filter (a filter gradient), false if it
  /// writes the response (a forward convolution).
  bool writesFilter;
};

} // namespace

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

/// Returns true if the op's body is `out + a * b` on its two inputs.
static bool hasMultiplyAccumulateBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 || body->getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(body->front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body->begin()));
  auto yield = dyn_cast<linalg::YieldOp>(body->back());
  if (!mul || !add || !yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != add.getResult())
    return false;
  Value a = body->getArgument(0), b = body->getArgument(1),
        out = body->getArgument(2);
  bool mulReadsInputs = (mul.getLhs() == a && mul.getRhs() == b) ||
                        (mul.getLhs() == b && mul.getRhs() == a);
  bool addsToOut = (add.getLhs() == out && add.getRhs() == mul.getResult()) ||
                   (add.getRhs() == out && add.getLhs() == mul.getResult());
  return mulReadsInputs && addsToOut;
}

/// Returns true if `op` computes `out += a * b` on static f32 buffers.
static bool isStaticF32MultiplyAccumulate(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !hasMultiplyAccumulateBody(op))
    return false;
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    auto memref = dyn_cast<MemRefType>(type);
    return memref && memref.getElementType().isF32() && memref.hasStaticShape();
  });
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
    Role role;
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

/// Recognises `op` as a 2-D (or 1-D) convolution from its indexing maps,
/// iterator types and body alone, so named convolutions
/// (`linalg.conv_2d_nchw_fchw`, `conv_2d_ngchw_gfchw`, depthwise ones) and
/// generics that compute the same sums (a filter gradient) are all found.
/// Fails for anything that is not exactly such a sum of products on static
/// f32 buffers.
static FailureOr<Convolution> matchConvolution(linalg::LinalgOp op) {
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
  return conv;
}

/// The type of the views the runtime's kernels take: rank 5, f32, any
/// sizes and strides.
static MemRefType getViewType(MLIRContext *context) {
  SmallVector<int64_t> dynamic(5, ShapedType::kDynamic);
  return MemRefType::get(
      dynamic, Float32Type::get(context),
      StridedLayoutAttr::get(context, ShapedType::kDynamic, dynamic));
}

/// A rank-5 view of `operand` with the given roles as its dimensions, in
/// that order: the operand's own sizes and strides for the roles its map
/// reads, size 1 for the others. The image reads its spatial roles through
/// its compound results.
static Value buildRoleView(RewriterBase &rewriter, Location loc, Value operand,
                           AffineMap map, ArrayRef<Role> roles,
                           const Convolution &conv, bool isImage, Value one) {
  auto metadata =
      memref::ExtractStridedMetadataOp::create(rewriter, loc, operand);
  SmallVector<Value> sizes, strides;
  for (Role role : roles) {
    std::optional<unsigned> position;
    if (isImage && (role == kOH || role == kOW)) {
      if (conv.imageSpatial[role - kOH] >= 0)
        position = conv.imageSpatial[role - kOH];
    } else if (conv.dims[role] >= 0) {
      position =
          map.getResultPosition(rewriter.getAffineDimExpr(conv.dims[role]));
    }
    if (!position) {
      sizes.push_back(one);
      strides.push_back(one);
      continue;
    }
    sizes.push_back(metadata.getSizes()[*position]);
    strides.push_back(metadata.getStrides()[*position]);
  }
  return memref::ReinterpretCastOp::create(
      rewriter, loc, getViewType(rewriter.getContext()),
      metadata.getBaseBuffer(), metadata.getOffset(), sizes, strides);
}

namespace {

struct RematConvToBlasPass
    : remat::impl::RematConvToBlasPassBase<RematConvToBlasPass> {
  using RematConvToBlasPassBase::RematConvToBlasPassBase;

  void runOnOperation() override;
};

} // namespace

void RematConvToBlasPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<std::pair<linalg::LinalgOp, Convolution>> convolutions;
  module.walk([&](linalg::LinalgOp op) {
    FailureOr<Convolution> conv = matchConvolution(op);
    if (succeeded(conv))
      convolutions.push_back({op, *conv});
  });
  if (convolutions.empty())
    return;

  MLIRContext *context = &getContext();
  MemRefType viewType = getViewType(context);
  IntegerType i64 = IntegerType::get(context, 64);
  auto getOrDeclare = [&](StringRef name) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    SmallVector<Type> arguments(3, viewType);
    arguments.append(4, i64);
    auto function =
        func::FuncOp::create(builder, module.getLoc(), name,
                             FunctionType::get(context, arguments, {}));
    function.setPrivate();
    function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                      UnitAttr::get(context));
    return function;
  };

  IRRewriter rewriter(context);
  for (auto &[op, conv] : convolutions) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> operands = {
        buildRoleView(rewriter, loc, op->getOperand(conv.image),
                      maps[conv.image], kImageRoles, conv,
                      /*isImage=*/true, one),
        buildRoleView(rewriter, loc, op->getOperand(conv.filter),
                      maps[conv.filter], kFilterRoles, conv,
                      /*isImage=*/false, one),
        buildRoleView(rewriter, loc, op->getOperand(conv.response),
                      maps[conv.response], kResponseRoles, conv,
                      /*isImage=*/false, one)};
    for (int64_t value : {conv.strides[0], conv.strides[1], conv.dilations[0],
                          conv.dilations[1]})
      operands.push_back(
          arith::ConstantIntOp::create(rewriter, loc, value, 64));
    func::FuncOp callee =
        getOrDeclare(conv.writesFilter ? "remat_conv2d_filter_grad_f32"
                                       : "remat_conv2d_f32");
    func::CallOp::create(rewriter, loc, callee, operands);
    LLVM_DEBUG(llvm::dbgs()
               << "remat-conv-to-blas: " << op->getName()
               << (conv.writesFilter ? " (filter gradient)" : "") << "\n");
    rewriter.eraseOp(op);
    ++numConvolutions;
  }
}
