// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// A file cut off in the middle of a type.
// CHECK: {{.*}}truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error: expected non-function type
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<4xf32>
    remat.yield %d : tensor<4x
