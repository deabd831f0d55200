//===- RematToLinalgTest.cpp - remat's patterns in another conversion -----===//
//
// Tests that the patterns and legality of the remat-to-linalg lowering work
// inside a dialect conversion of another compiler's making: here one that
// also turns elementwise ops on tensors into linalg with upstream's
// patterns, in a single applyPartialConversion.
//
//===----------------------------------------------------------------------===//

#include "remat/Conversion/RematToLinalg/RematToLinalg.h"
#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/DialectConversion.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

class RematToLinalgTest : public ::testing::Test {
protected:
  RematToLinalgTest() {
    context.loadDialect<remat::RematDialect, arith::ArithDialect,
                        func::FuncDialect, linalg::LinalgDialect,
                        math::MathDialect, tensor::TensorDialect>();
  }

  /// Converts `module` with remat's patterns and upstream's elementwise ones
  /// under one target.
  LogicalResult convert(ModuleOp module) {
    ConversionTarget target(context);
    remat::configureRematToLinalgConversionLegality(target);
    // remat's legality marks arith legal; this conversion refines it, as
    // its own rules come after remat's.
    auto isNotElementwiseOnTensors = [](Operation *op) {
      return !OpTrait::hasElementwiseMappableTraits(op) ||
             !llvm::any_of(op->getOperandTypes(),
                           llvm::IsaPred<RankedTensorType>);
    };
    target.markUnknownOpDynamicallyLegal(isNotElementwiseOnTensors);
    target.addDynamicallyLegalDialect<arith::ArithDialect>(
        isNotElementwiseOnTensors);
    RewritePatternSet patterns(&context);
    remat::populateRematToLinalgConversionPatterns(patterns);
    linalg::populateElementwiseToLinalgConversionPatterns(patterns);
    return applyPartialConversion(module, target, std::move(patterns));
  }

  /// Returns the names of `module`'s ops in `function`, in order.
  static std::vector<std::string> opNames(ModuleOp module, StringRef function) {
    std::vector<std::string> names;
    auto func = module.lookupSymbol<func::FuncOp>(function);
    for (Operation &op : func.getBody().front())
      names.push_back(op.getName().getStringRef().str());
    return names;
  }

  MLIRContext context;
};

constexpr StringLiteral kStep = R"mlir(
  func.func @step(%x: tensor<4xf32>, %off: i64) -> (tensor<4xf32>, tensor<4xf32>) {
    %seed = remat.rng_seed
    %u = remat.philox_uniform %seed, %off : tensor<4xf32>
    %y = math.tanh %x : tensor<4xf32>
    %g = remat.backward {
      %b = remat.barrier %x : tensor<4xf32>
      %r = math.tanh %b : tensor<4xf32>
      %d = arith.mulf %r, %u : tensor<4xf32>
      remat.yield %d : tensor<4xf32>
    } : tensor<4xf32>
    return %y, %g : tensor<4xf32>, tensor<4xf32>
  }
)mlir";

TEST_F(RematToLinalgTest, LowersInsideAnotherConversion) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kStep, &context);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(convert(*module)));
  ASSERT_TRUE(succeeded(verify(*module)));

  // The seed function is declared, every remat op but the barrier is gone,
  // and the elementwise ops, including those the backward region held,
  // became linalg.generic ops in the function's one block.
  auto seed = module->lookupSymbol<func::FuncOp>("remat_rng_seed");
  ASSERT_TRUE(seed);
  EXPECT_TRUE(seed.isExternal());
  std::vector<std::string> expected = {
      "func.call",                        // the seed
      "tensor.empty",   "linalg.generic", // the Philox numbers
      "linalg.generic",                   // tanh
      "remat.barrier",  "linalg.generic", // the clone's tanh
      "linalg.generic",                   // mulf
      "func.return"};
  EXPECT_EQ(opNames(*module, "step"), expected);
}

TEST_F(RematToLinalgTest, LeavesStatefulRandomOpsIllegal) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @stateful() -> tensor<4xf32> {
      %u = remat.rng_uniform : tensor<4xf32>
      return %u : tensor<4xf32>
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  // Its bits would differ on every run: no pattern lowers it.
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(convert(*module)));
}

} // namespace
