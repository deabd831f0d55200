// RUN: %expect_exit 1 -- remat-opt %s -remat-report -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 1 -- remat-opt %s '-remat-mark=policy=budget budget-fraction=0.5' -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 1 -- remat-opt %s -remat-outline -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 1 -- remat-opt %s -remat-lower-cpu -o /dev/null 2>&1 | FileCheck %s
// A step whose return sits in a second block (remat-report and remat-mark
// segfaulted, remat-outline produced IR that does not verify): every tool
// rejects it where it is read, with a location, and nothing crashes.
// CHECK: multi-block-step.mlir:[[@LINE+5]]:8: error: 'remat.backward' op is in a function body of 3 blocks; a training step's body is a single block
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>, %c: i1)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %y, %g : tensor<4xf32>, tensor<4xf32>
^bb2:
  return %g, %y : tensor<4xf32>, tensor<4xf32>
}
