// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// The backward region yields another type than it declares.
// CHECK: {{.*}}wrong-type.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'remat.yield' op yields 1 value(s) of types ('tensor<4xf32>') but the enclosing 'remat.backward' returns ('tensor<8xf32>')
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<8xf32>
  return %y, %g : tensor<4xf32>, tensor<8xf32>
}
