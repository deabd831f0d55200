// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// A cycle through the backward region (a use before its definition).
// CHECK: {{.*}}backward-cycle.mlir:{{[0-9]+}}:{{[0-9]+}}: error: operand #0 does not dominate this use
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %a = arith.mulf %b, %y : tensor<4xf32>
    %b = arith.addf %a, %dy : tensor<4xf32>
    remat.yield %b : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}
