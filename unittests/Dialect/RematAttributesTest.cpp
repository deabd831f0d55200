//===- RematAttributesTest.cpp - remat discardable attributes -------------===//
//
// Tests the helpers that read and write remat's discardable attributes and
// their verification through the dialect.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/Remat/IR/RematOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

class RematAttributesTest : public ::testing::Test {
protected:
  RematAttributesTest() {
    context.loadDialect<remat::RematDialect, func::FuncDialect,
                        arith::ArithDialect>();
  }

  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }

  /// Returns the first op named `name` in `module`.
  Operation *find(ModuleOp module, StringRef name) {
    Operation *found = nullptr;
    module.walk([&](Operation *op) {
      if (!found && op->getName().getStringRef() == name)
        found = op;
    });
    return found;
  }

  MLIRContext context;
};

constexpr StringLiteral kStep = R"mlir(
  func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %y = arith.addf %x, %x {remat.segment = 3 : i64} : tensor<4xf32>
    %z = arith.mulf %y, %y {remat.segment = [0, 2], remat.policy = "save"} : tensor<4xf32>
    %g = remat.backward {
      %d = arith.mulf %z, %y : tensor<4xf32>
      remat.yield %d : tensor<4xf32>
    } : tensor<4xf32>
    return %z, %g : tensor<4xf32>, tensor<4xf32>
  }
)mlir";

TEST_F(RematAttributesTest, ReadsSegmentPathsAndPolicies) {
  OwningOpRef<ModuleOp> module = parse(kStep);
  ASSERT_TRUE(module);
  Operation *add = find(*module, "arith.addf");
  EXPECT_EQ(remat::getSegmentPath(add), SmallVector<int64_t>({3}));
  EXPECT_EQ(remat::getPolicy(add), remat::Policy::None);

  Operation *mul = find(*module, "arith.mulf");
  EXPECT_EQ(remat::getSegmentPath(mul), SmallVector<int64_t>({0, 2}));
  EXPECT_EQ(remat::getPolicy(mul), remat::Policy::Save);

  auto function = cast<func::FuncOp>(find(*module, "func.func"));
  remat::BackwardOp backward = remat::getBackwardOp(function.getBody());
  ASSERT_TRUE(backward);
  EXPECT_FALSE(remat::isInBackwardRegion(mul));
  EXPECT_TRUE(remat::isInBackwardRegion(&backward.getBody().front().front()));
}

TEST_F(RematAttributesTest, WritesSegmentPathsThatVerify) {
  OwningOpRef<ModuleOp> module = parse(kStep);
  ASSERT_TRUE(module);
  Operation *add = find(*module, "arith.addf");

  remat::setSegmentPath(add, {1, 4, 7});
  EXPECT_EQ(remat::getSegmentPath(add), SmallVector<int64_t>({1, 4, 7}));
  EXPECT_TRUE(succeeded(verify(*module)));

  remat::setSegmentPath(add, {5});
  EXPECT_TRUE(isa<IntegerAttr>(add->getAttr("remat.segment")));
  EXPECT_EQ(remat::getSegmentPath(add), SmallVector<int64_t>({5}));

  remat::setSegmentPath(add, {});
  EXPECT_FALSE(add->hasAttr("remat.segment"));
  EXPECT_TRUE(remat::getSegmentPath(add).empty());
}

TEST_F(RematAttributesTest, RejectsMalformedSegments) {
  OwningOpRef<ModuleOp> module = parse(kStep);
  ASSERT_TRUE(module);
  Operation *add = find(*module, "arith.addf");
  Builder builder(&context);

  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });

  add->setAttr("remat.segment", builder.getI64IntegerAttr(-1));
  EXPECT_TRUE(failed(verify(*module)));
  EXPECT_NE(message.find("non-negative i64"), std::string::npos) << message;

  add->setAttr("remat.segment", builder.getArrayAttr({}));
  EXPECT_TRUE(failed(verify(*module)));

  add->setAttr("remat.segment", builder.getI32IntegerAttr(1));
  EXPECT_TRUE(failed(verify(*module)));
}

} // namespace
