// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// Dynamic shapes outside segments: the backward's results.
// CHECK: {{.*}}dynamic-unmarked.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'remat.backward' op result #0 has the dynamic shape 'tensor<?xf32>'; training steps need static shapes
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<?xf32>, %dy: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %y = math.tanh %x : tensor<?xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<?xf32>
    remat.yield %d : tensor<?xf32>
  } : tensor<?xf32>
  return %y, %g : tensor<?xf32>, tensor<?xf32>
}
