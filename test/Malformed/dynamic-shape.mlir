// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// A segment op with a dynamic shape cannot be priced in bytes.
// CHECK: {{.*}}dynamic-shape.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'math.exp' op is in a checkpoint segment but result #0 has the dynamic shape 'tensor<?xf32>'; segments need static shapes
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<?xf32>, %dy: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %y = math.tanh %x : tensor<?xf32>
  %z = math.exp %y {remat.segment = 0 : i64} : tensor<?xf32>
  %g = remat.backward {
    %d = arith.mulf %dy, %z : tensor<?xf32>
    remat.yield %d : tensor<?xf32>
  } : tensor<?xf32>
  return %z, %g : tensor<?xf32>, tensor<?xf32>
}
