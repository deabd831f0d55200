//===- ConvToCublas.cpp - Convolutions as im2col gathers and GEMMs --------===//
//
// This file implements the CUDA target's convolution rewrite and
// -remat-conv-to-cublas: an f32 convolution of one group on buffers
// (matchConvolution) becomes im2col gathers into device buffers of its own
// and (batch) matmuls, which -remat-matmul-to-cublas then calls cuBLAS for.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/LibraryCalls.h"
#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "remat-conv-to-cublas"

namespace remat {
#define GEN_PASS_DEF_REMATCONVTOCUBLASPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

/// The bytes an im2col tile may take: its images are gathered into a device
/// buffer of their own, outside the step's arena.
constexpr int64_t kIm2colTileBytes = 2 << 20;

/// The extent of `role` in `op`'s loops (1 for a role it lacks).
static int64_t getExtent(const Convolution &conv, ArrayRef<int64_t> ranges,
                         ConvolutionRole role) {
  return conv.dims[role] >= 0 ? ranges[conv.dims[role]] : 1;
}

/// `map`, an operand's map in `op`'s loop dimensions, read from a loop nest
/// of `numDims` dimensions in which each role in `roles` is the dimension at
/// its position. Roles the nest lacks read index 0 (extent 1, or absent from
/// `map`).
static AffineMap remapRoles(linalg::LinalgOp op, const Convolution &conv,
                            AffineMap map, ArrayRef<ConvolutionRole> roles) {
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
               AffineMap map, ArrayRef<ConvolutionRole> roles,
               unsigned contiguous) {
  auto type = cast<MemRefType>(operand.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  // The map's results, in order, are the roles the op has.
  SmallVector<ConvolutionRole> present;
  for (ConvolutionRole role : roles)
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
  auto extent = [&](ConvolutionRole role) {
    return getExtent(conv, ranges, role);
  };
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
  constexpr ConvolutionRole kFilterOrder[] = {kF, kC, kKH, kKW};

  if (!conv.writesFilter) {
    // response[n, f, p] += filter[f, k] * windows[n, k, p], the filter
    // copied into a matrix and broadcast over the tile's images.
    constexpr ConvolutionRole kWindowOrder[] = {kN, kC, kKH, kKW, kOH, kOW};
    constexpr ConvolutionRole kResponseOrder[] = {kN, kF, kOH, kOW};
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
  constexpr ConvolutionRole kWindowOrder[] = {kN, kOH, kOW, kC, kKH, kKW};
  constexpr ConvolutionRole kResponseOrder[] = {kF, kN, kOH, kOW};
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

/// An f32 convolution of one group (matchConvolution) to im2col gathers and
/// matmuls for cuBLAS (rewriteForCublas). 2-byte ones stay loops: cuBLAS
/// runs in pedantic FP32 here.
struct ConvToCublas : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Convolution> conv = matchConvolution(op);
    if (failed(conv) || !conv->inputType.isF32())
      return rewriter.notifyMatchFailure(op, "not an f32 convolution");
    if (failed(rewriteForCublas(rewriter, op, *conv)))
      return rewriter.notifyMatchFailure(op, "a grouped convolution");
    LLVM_DEBUG(llvm::dbgs()
               << "remat-conv-to-cublas: " << op->getName() << " to cuBLAS"
               << (conv->writesFilter ? " (filter gradient)" : "") << "\n");
    rewriter.eraseOp(op);
    return success();
  }
};

struct RematConvToCublasPass
    : remat::impl::RematConvToCublasPassBase<RematConvToCublasPass> {
  using RematConvToCublasPassBase::RematConvToCublasPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateConvToCublasPatterns(patterns);
    numConvolutions +=
        applyLibraryCallPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void remat::populateConvToCublasPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvToCublas>(patterns.getContext());
}
