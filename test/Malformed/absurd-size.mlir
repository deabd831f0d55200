// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// A 2^40-element tensor (4 TiB): rejected, not priced.
// CHECK: {{.*}}absurd-size.mlir:{{[0-9]+}}:{{[0-9]+}}: error: argument #0 of @step has the type 'tensor<1048576x1048576xf32>' of more than 2^40 bytes (1 TiB)
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<1048576x1048576xf32>, %dy: tensor<1048576x1048576xf32>) -> (tensor<1048576x1048576xf32>, tensor<1048576x1048576xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<1048576x1048576xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<1048576x1048576xf32>
    remat.yield %d : tensor<1048576x1048576xf32>
  } : tensor<1048576x1048576xf32>
  return %y, %g : tensor<1048576x1048576xf32>, tensor<1048576x1048576xf32>
}
