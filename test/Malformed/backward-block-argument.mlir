// RUN: %expect_exit 1 -- remat-opt %s -remat-report -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 1 -- remat-opt %s -remat-outline -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 1 -- remat-opt %s -convert-remat-to-linalg -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 1 -- remat-opt %s -remat-lower-cpu -o /dev/null 2>&1 | FileCheck %s
// A backward region whose block takes an argument nothing can pass (the
// outliner and the lowering left uses of the erased argument and crashed).
// CHECK: backward-block-argument.mlir:[[@LINE+5]]:8: error: 'remat.backward' op has a region with 1 block argument(s)
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
  ^bb0(%a: tensor<4xf32>):
    %d = arith.mulf %a, %y : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}
