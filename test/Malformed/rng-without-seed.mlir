// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// A random op in a step without a seed argument or remat.rng_seed op.
// CHECK: {{.*}}rng-without-seed.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'remat.rng_uniform' op has no seed to thread
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %u = remat.rng_uniform {remat.segment = 0 : i64} : tensor<4xf32>
  %y = arith.mulf %x, %u {remat.segment = 0 : i64} : tensor<4xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %u : tensor<4xf32>
    remat.yield %d : tensor<4xf32>
  } : tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}
