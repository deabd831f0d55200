// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// A forward op that uses the backward's result: a cycle forward -> backward -> forward.
// CHECK: {{.*}}forward-uses-backward-result.mlir:{{[0-9]+}}:{{[0-9]+}}: error: operand #1 does not dominate this use
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %g {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}
