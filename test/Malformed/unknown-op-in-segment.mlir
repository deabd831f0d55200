// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// An op of an unknown dialect in a segment.
// CHECK: {{.*}}unknown-op-in-segment.mlir:{{[0-9]+}}:{{[0-9]+}}: error: operation being parsed with an unregistered dialect
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = "foo.bar"(%x) {remat.segment = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}
