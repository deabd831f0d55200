// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// An element count that overflows int64 (2^68): rejected, never wrapped.
// CHECK: {{.*}}overflow-size.mlir:{{[0-9]+}}:{{[0-9]+}}: error: argument #0 of @step has the type 'tensor<4294967296x4294967296x16xf32>' of more than 2^40 bytes
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<4294967296x4294967296x16xf32>, %dy: tensor<4294967296x4294967296x16xf32>) -> (tensor<4294967296x4294967296x16xf32>, tensor<4294967296x4294967296x16xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<4294967296x4294967296x16xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<4294967296x4294967296x16xf32>
    remat.yield %d : tensor<4294967296x4294967296x16xf32>
  } : tensor<4294967296x4294967296x16xf32>
  return %y, %g : tensor<4294967296x4294967296x16xf32>, tensor<4294967296x4294967296x16xf32>
}
