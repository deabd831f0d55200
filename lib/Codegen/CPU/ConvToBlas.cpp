//===- ConvToBlas.cpp - Convolutions on buffers as runtime calls ----------===//
//
// This file implements the CPU's convolution calls and -remat-conv-to-blas:
// convolutions on buffers (matchConvolution), the forward form and the
// filter-gradient form, named or generic, become calls into the runtime's
// convolution kernels (im2col tiles into sgemm, or a direct loop nest for
// depthwise shapes).
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/LibraryCalls.h"
#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
using namespace remat;

/// The roles of each operand's view, in the order the runtime reads them.
constexpr ConvolutionRole kImageRoles[] = {kN, kG, kC, kOH, kOW};
constexpr ConvolutionRole kFilterRoles[] = {kG, kF, kC, kKH, kKW};
constexpr ConvolutionRole kResponseRoles[] = {kN, kG, kF, kOH, kOW};

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
                           AffineMap map, ArrayRef<ConvolutionRole> roles,
                           const Convolution &conv, bool isImage, Value one) {
  auto metadata =
      memref::ExtractStridedMetadataOp::create(rewriter, loc, operand);
  SmallVector<Value> sizes, strides;
  for (ConvolutionRole role : roles) {
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

namespace {

/// A convolution (matchConvolution) to a call of the CPU runtime's
/// `remat_conv2d_<type>` or `remat_conv2d_filter_grad_<type>` on rank-5
/// views of its operands in the kernels' order, with its strides and
/// dilations as i64 arguments.
struct ConvToBlas : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Convolution> conv = matchConvolution(op);
    if (failed(conv))
      return rewriter.notifyMatchFailure(op, "not a convolution");
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> operands = {
        buildRoleView(rewriter, loc, op->getOperand(conv->image),
                      maps[conv->image], kImageRoles, *conv,
                      /*isImage=*/true, one),
        buildRoleView(rewriter, loc, op->getOperand(conv->filter),
                      maps[conv->filter], kFilterRoles, *conv,
                      /*isImage=*/false, one),
        buildRoleView(rewriter, loc, op->getOperand(conv->response),
                      maps[conv->response], kResponseRoles, *conv,
                      /*isImage=*/false, one)};
    for (int64_t value : {conv->strides[0], conv->strides[1],
                          conv->dilations[0], conv->dilations[1]})
      operands.push_back(
          arith::ConstantIntOp::create(rewriter, loc, value, 64));
    // 2-byte inputs (autocast's) call the kernels that convert them to f32.
    SmallVector<Type> arguments;
    for (Value operand : operands)
      arguments.push_back(operand.getType());
    func::FuncOp callee = getOrDeclareRuntimeFunction(
        rewriter, op,
        (Twine(conv->writesFilter ? "remat_conv2d_filter_grad_"
                                  : "remat_conv2d_") +
         getRuntimeTypeSuffix(conv->inputType))
            .str(),
        rewriter.getFunctionType(arguments, {}));
    func::CallOp::create(rewriter, loc, callee, operands);
    LLVM_DEBUG(llvm::dbgs()
               << "remat-conv-to-blas: " << op->getName()
               << (conv->writesFilter ? " (filter gradient)" : "") << "\n");
    rewriter.eraseOp(op);
    return success();
  }
};

struct RematConvToBlasPass
    : remat::impl::RematConvToBlasPassBase<RematConvToBlasPass> {
  using RematConvToBlasPassBase::RematConvToBlasPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateConvToBlasPatterns(patterns);
    numConvolutions +=
        applyLibraryCallPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void remat::populateConvToBlasPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvToBlas>(patterns.getContext());
}
