// RUN: not remat-opt %s 2>&1 | FileCheck %s -DFILE=%s

// Checks that a verifier error is reported with file:line:col and makes
// remat-opt exit with 1, not crash (`not` fails on a crash).
// CHECK: [[FILE]]:[[@LINE+3]]:8: error: 'arith.addf' op 'remat.policy' must be "save" or "recompute"
// CHECK-NOT: Stack dump
func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x {remat.policy = "always"} : tensor<4xf32>
  return %y : tensor<4xf32>
}
