//===- ConvToBlas.cpp - Convolutions on buffers as runtime calls ----------===//
//
// This file implements -remat-conv-to-blas: f32 convolutions on buffers, the
// forward form and the filter-gradient form, named or generic, become calls
// into the runtime's convolution kernels (im2col tiles into sgemm, or a
// direct loop nest for depthwise shapes).
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

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
#include "remat/Codegen/Passes.h.inc"
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

/// The element type of the convolution's inputs (f32, bf16 or f16).
static Type getInputType(linalg::LinalgOp op) {
  return cast<MemRefType>(op.getDpsInputOperand(0)->get().getType())
      .getElementType();
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

/// The type of the views the runtime's kernels take: rank 5, of
/// `elementType`, any sizes and strides.
static MemRefType getViewType(Type elementType) {
  MLIRContext *context = elementType.getContext();
  SmallVector<int64_t> dynamic(5, ShapedType::kDynamic);
  return MemRefType::get(
      dynamic, elementType,
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
      rewriter, loc,
      getViewType(cast<MemRefType>(operand.getType()).getElementType()),
      metadata.getBaseBuffer(), metadata.getOffset(), sizes, strides);
}

//===----------------------------------------------------------------------===//
// The CUDA form: im2col gathers and matmuls for cuBLAS
//===----------------------------------------------------------------------===//

/// The bytes an im2col tile may take: its images are gathered into a device
/// buffer of their own, outside the step's arena.
constexpr int64_t kIm2colTileBytes = 2 << 20;

/// The extent of `role` in `op`'s loops (1 for a role it lacks).
static int64_t getExtent(const Convolution &conv, ArrayRef<int64_t> ranges,
                         Role role) {
  return conv.dims[role] >= 0 ? ranges[conv.dims[role]] : 1;
}

/// `map`, an operand's map in `op`'s loop dimensions, read from a loop nest
/// of `numDims` dimensions in which each role in `roles` is the dimension at
/// its position. Roles the nest lacks read index 0 (extent 1, or absent from
/// `map`).
static AffineMap remapRoles(linalg::LinalgOp op, const Convolution &conv,
                            AffineMap map, ArrayRef<Role> roles) {
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> replacements(op.getNumLoops(),
                                       getAffineConstantExpr(0, context));
  for (auto [position, role] : llvm::enumerate(roles))
    if (conv.dims[role] >= 0)
      replacements[conv.dims[role]] = getAffineDimExpr(position, context);
  return map.replaceDimsAndSymbols(replacements, {}, roles.size(), 0);
}

/// The images `first` to `first + count` of `operand`, read through `map`:
/// a subview along the dimension that the batch role indexes.
static Value sliceImages(RewriterBase &rewriter, Location loc,
                         const Convolution &conv, Value operand, AffineMap map,
                         int64_t first, int64_t count) {
  if (conv.dims[kN] < 0)
    return operand;
  auto type = cast<MemRefType>(operand.getType());
  std::optional<unsigned> position =
      map.getResultPosition(rewriter.getAffineDimExpr(unsigned(conv.dims[kN])));
  assert(position && "the batch role indexes its own dimension");
  SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes,
      strides(type.getRank(), rewriter.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(rewriter.getIndexAttr(size));
  offsets[*position] = rewriter.getIndexAttr(first);
  sizes[*position] = rewriter.getIndexAttr(count);
  return memref::SubViewOp::create(rewriter, loc, operand, offsets, sizes,
                                   strides);
}

/// `out = in` (or `out += in` with `accumulate`) over the loop nest of
/// `in`'s shape, reading `in` and `out` through the given maps.
static void buildGather(OpBuilder &b, Location loc, Value in, AffineMap inMap,
                        Value out, AffineMap outMap, bool accumulate) {
  SmallVector<utils::IteratorType> iterators(inMap.getNumDims(),
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{in}, ValueRange{out},
      ArrayRef<AffineMap>{inMap, outMap}, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value value = args[0];
        if (accumulate)
          value = arith::AddFOp::create(b, loc, args[1], value);
        linalg::YieldOp::create(b, loc, value);
      });
}

/// A view of `source` at a static offset with static sizes and strides,
/// which the caller knows its layout allows.
static Value buildView(OpBuilder &b, Location loc, Value source, int64_t offset,
                       ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  auto type =
      MemRefType::get(sizes, b.getF32Type(),
                      StridedLayoutAttr::get(b.getContext(), offset, strides));
  return memref::ReinterpretCastOp::create(b, loc, type, source, offset, sizes,
                                           strides);
}

/// If `operand`, read through `map`, is laid out as `roles` in that order
/// with the last `contiguous` of them collapsible into one unit-stride
/// dimension, returns its static offset and the strides of its roles.
static std::optional<std::pair<int64_t, SmallVector<int64_t>>>
getRoleStrides(linalg::LinalgOp op, const Convolution &conv, Value operand,
               AffineMap map, ArrayRef<Role> roles, unsigned contiguous) {
  auto type = cast<MemRefType>(operand.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  // The map's results, in order, are the roles the op has.
  SmallVector<Role> present;
  for (Role role : roles)
    if (conv.dims[role] >= 0)
      present.push_back(role);
  if (map.getNumResults() != present.size())
    return std::nullopt;
  SmallVector<int64_t> roleStrides(roles.size(), 0);
  for (auto [position, role] : llvm::enumerate(present)) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(position));
    if (!dim || dim.getPosition() != unsigned(conv.dims[role]))
      return std::nullopt;
    roleStrides[llvm::find(roles, role) - roles.begin()] = strides[position];
  }
  // The collapsed roles: each stride is the next one's times its extent.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t expected = 1;
  for (unsigned i = 0; i < contiguous; ++i) {
    unsigned position = roles.size() - 1 - i;
    int64_t extent = getExtent(conv, ranges, roles[position]);
    if (extent != 1 && roleStrides[position] != expected)
      return std::nullopt;
    roleStrides[position] = expected;
    expected *= extent;
  }
  return std::make_pair(offset, roleStrides);
}

/// Rewrites `op`, a convolution of one group, into im2col gathers and
/// matmuls (see the pass's description). Returns failure, leaving `op`
/// alone, for grouped convolutions.
static LogicalResult rewriteForCublas(RewriterBase &rewriter,
                                      linalg::LinalgOp op,
                                      const Convolution &conv) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto extent = [&](Role role) { return getExtent(conv, ranges, role); };
  if (extent(kG) != 1)
    return failure();
  int64_t n = extent(kN), f = extent(kF), c = extent(kC), kh = extent(kKH),
          kw = extent(kKW), oh = extent(kOH), ow = extent(kOW);
  int64_t k = c * kh * kw, pixels = oh * ow;
  // The most images (a divisor of N) whose windows fit in a tile.
  int64_t tile = 1;
  for (int64_t t = n; t >= 1; --t) {
    if (n % t == 0 && t * k * pixels * 4 <= kIm2colTileBytes) {
      tile = t;
      break;
    }
  }

  Location loc = op.getLoc();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value image = op->getOperand(conv.image);
  Value filter = op->getOperand(conv.filter);
  Value response = op->getOperand(conv.response);
  MLIRContext *context = op.getContext();
  Type f32 = rewriter.getF32Type();
  auto alloc = [&](ArrayRef<int64_t> shape) -> Value {
    return memref::AllocOp::create(rewriter, loc, MemRefType::get(shape, f32));
  };
  auto identity = [&](unsigned rank) {
    return AffineMap::getMultiDimIdentityMap(rank, context);
  };
  auto zero = [&](Value buffer) {
    Value value = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getF32FloatAttr(0.0f));
    linalg::FillOp::create(rewriter, loc, ValueRange{value},
                           ValueRange{buffer});
  };
  rewriter.setInsertionPoint(op);
  // The filter as a matrix: [F, C * KH * KW].
  constexpr Role kFilterOrder[] = {kF, kC, kKH, kKW};

  if (!conv.writesFilter) {
    // response[n, f, p] += filter[f, k] * windows[n, k, p], the filter
    // copied into a matrix and broadcast over the tile's images.
    constexpr Role kWindowOrder[] = {kN, kC, kKH, kKW, kOH, kOW};
    constexpr Role kResponseOrder[] = {kN, kF, kOH, kOW};
    Value matrix = alloc({f, c, kh, kw});
    buildGather(rewriter, loc, filter,
                remapRoles(op, conv, maps[conv.filter], kFilterOrder), matrix,
                identity(4), /*accumulate=*/false);
    Value broadcast =
        buildView(rewriter, loc, matrix, 0, {tile, f, k}, {0, k, 1});
    auto direct = getRoleStrides(op, conv, response, maps[conv.response],
                                 kResponseOrder, /*contiguous=*/2);
    for (int64_t first = 0; first < n; first += tile) {
      Value windows = alloc({tile, c, kh, kw, oh, ow});
      buildGather(rewriter, loc,
                  sliceImages(rewriter, loc, conv, image, maps[conv.image],
                              first, tile),
                  remapRoles(op, conv, maps[conv.image], kWindowOrder), windows,
                  identity(6), /*accumulate=*/false);
      Value columns = buildView(rewriter, loc, windows, 0, {tile, k, pixels},
                                {k * pixels, pixels, 1});
      if (direct) {
        auto [offset, strides] = *direct;
        Value out =
            buildView(rewriter, loc, response, offset + first * strides[0],
                      {tile, f, pixels}, {strides[0], strides[1], 1});
        linalg::BatchMatmulOp::create(
            rewriter, loc, ValueRange{broadcast, columns}, ValueRange{out});
      } else {
        Value product = alloc({tile, f, oh, ow});
        zero(product);
        linalg::BatchMatmulOp::create(
            rewriter, loc, ValueRange{broadcast, columns},
            ValueRange{buildView(rewriter, loc, product, 0, {tile, f, pixels},
                                 {f * pixels, pixels, 1})});
        buildGather(rewriter, loc, product, identity(4),
                    sliceImages(rewriter, loc, conv, response,
                                maps[conv.response], first, tile),
                    remapRoles(op, conv, maps[conv.response], kResponseOrder),
                    /*accumulate=*/true);
        memref::DeallocOp::create(rewriter, loc, product);
      }
      memref::DeallocOp::create(rewriter, loc, windows);
    }
    memref::DeallocOp::create(rewriter, loc, matrix);
    return success();
  }

  // filter[f, k] += response[f, (n, p)] * windows[(n, p), k], over the
  // tile's images and pixels, tile after tile.
  constexpr Role kWindowOrder[] = {kN, kOH, kOW, kC, kKH, kKW};
  constexpr Role kResponseOrder[] = {kF, kN, kOH, kOW};
  auto direct = getRoleStrides(op, conv, filter, maps[conv.filter],
                               kFilterOrder, /*contiguous=*/3);
  Value sum;
  Value out;
  if (direct) {
    auto [offset, strides] = *direct;
    out = buildView(rewriter, loc, filter, offset, {f, k}, {strides[0], 1});
  } else {
    sum = alloc({f, c, kh, kw});
    zero(sum);
    out = buildView(rewriter, loc, sum, 0, {f, k}, {k, 1});
  }
  for (int64_t first = 0; first < n; first += tile) {
    Value windows = alloc({tile, oh, ow, c, kh, kw});
    buildGather(
        rewriter, loc,
        sliceImages(rewriter, loc, conv, image, maps[conv.image], first, tile),
        remapRoles(op, conv, maps[conv.image], kWindowOrder), windows,
        identity(6), /*accumulate=*/false);
    Value gradient = alloc({f, tile, oh, ow});
    buildGather(rewriter, loc,
                sliceImages(rewriter, loc, conv, response, maps[conv.response],
                            first, tile),
                remapRoles(op, conv, maps[conv.response], kResponseOrder),
                gradient, identity(4), /*accumulate=*/false);
    linalg::MatmulOp::create(
        rewriter, loc,
        ValueRange{
            buildView(rewriter, loc, gradient, 0, {f, tile * pixels},
                      {tile * pixels, 1}),
            buildView(rewriter, loc, windows, 0, {tile * pixels, k}, {k, 1})},
        ValueRange{out});
    memref::DeallocOp::create(rewriter, loc, gradient);
    memref::DeallocOp::create(rewriter, loc, windows);
  }
  if (sum) {
    buildGather(rewriter, loc, sum, identity(4), filter,
                remapRoles(op, conv, maps[conv.filter], kFilterOrder),
                /*accumulate=*/true);
    memref::DeallocOp::create(rewriter, loc, sum);
  }
  return success();
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
  IntegerType i64 = IntegerType::get(context, 64);
  // The runtime's kernel `name` on views of `types` (image, filter,
  // response).
  auto getOrDeclare = [&](StringRef name, ArrayRef<Type> types) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    SmallVector<Type> arguments;
    for (Type type : types)
      arguments.push_back(getViewType(type));
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
  if (cuda) {
    for (auto &[op, conv] : convolutions) {
      // f32 only (cuBLAS in pedantic FP32); 2-byte ones stay loops.
      if (!getInputType(op).isF32() ||
          failed(rewriteForCublas(rewriter, op, conv)))
        continue;
      LLVM_DEBUG(llvm::dbgs()
                 << "remat-conv-to-blas: " << op->getName() << " to cuBLAS"
                 << (conv.writesFilter ? " (filter gradient)" : "") << "\n");
      rewriter.eraseOp(op);
      ++numConvolutions;
    }
    return;
  }
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
    // 2-byte inputs (autocast's) call the kernels that convert them to f32.
    Type inputType = getInputType(op);
    StringRef suffix = inputType.isBF16()  ? "_bf16"
                       : inputType.isF16() ? "_f16"
                                           : "_f32";
    SmallVector<Type> types;
    for (Value operand : ArrayRef<Value>(operands).take_front(3))
      types.push_back(cast<MemRefType>(operand.getType()).getElementType());
    func::FuncOp callee =
        getOrDeclare((Twine(conv.writesFilter ? "remat_conv2d_filter_grad"
                                              : "remat_conv2d") +
                      suffix)
                         .str(),
                     types);
    func::CallOp::create(rewriter, loc, callee, operands);
    LLVM_DEBUG(llvm::dbgs()
               << "remat-conv-to-blas: " << op->getName()
               << (conv.writesFilter ? " (filter gradient)" : "") << "\n");
    rewriter.eraseOp(op);
    ++numConvolutions;
  }
}
