//===- ApproximateMath.cpp - Vector polynomials for tanh, erf and exp -----===//
//
// This file implements -remat-approximate-math: tanh, erf, erfc and exp on f32
// become upstream's polynomial approximations, which stay in vector lanes,
// instead of one libm call per lane.
//
//===----------------------------------------------------------------------===//

#include "remat/Codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSwitch.h"

namespace remat {
#define GEN_PASS_DEF_REMATAPPROXIMATEMATHPASS
#include "remat/Codegen/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Whether `-remat-approximate-math` rewrites the op of this name.
bool isApproximated(StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases({"math.tanh", "math.erf", "math.erfc", "math.exp"}, true)
      .Default(false);
}

struct RematApproximateMathPass
    : remat::impl::RematApproximateMathPassBase<RematApproximateMathPass> {
  using RematApproximateMathPassBase::RematApproximateMathPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // The patterns apply to f32 (and vectors of f32) only; the count is of
    // the ops that are gone afterwards.
    auto countLeft = [&] {
      unsigned count = 0;
      getOperation()->walk([&](Operation *op) {
        if (isApproximated(op->getName().getStringRef()))
          ++count;
      });
      return count;
    };
    unsigned before = countLeft();
    if (before == 0)
      return;
    if (failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    numApproximated += before - countLeft();
  }
};

} // namespace
