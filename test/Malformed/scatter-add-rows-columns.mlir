// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-checkpoint -remat-verify -remat-report -o /dev/null 2>&1 | FileCheck %s
// RUN: %expect_exit 2 -- remat-run %s --random-inputs 1 2>&1 | FileCheck %s
// An embedding's backward adds gradient rows narrower than the table's.
// CHECK: {{.*}}scatter-add-rows-columns.mlir:[[@LINE+8]]:{{[0-9]+}}: error: 'remat.scatter_add_rows' op adds rows of 3 values into rows of 4; values and dest must have as many columns
// CHECK-NOT: Stack dump
func.func @step(%w: tensor<10x4xf32>, %i: tensor<6xi64>, %dy: tensor<6x3xf32>) -> (tensor<10x4xf32>, tensor<10x4xf32>) {
  %y = math.tanh %w {remat.segment = 0 : i64} : tensor<10x4xf32>
  %g = remat.backward {
    %c0 = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<10x4xf32>
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<10x4xf32>) -> tensor<10x4xf32>
    %gw = remat.scatter_add_rows %dy into %z[%i] skip 0 : tensor<6x3xf32>, tensor<6xi64> into tensor<10x4xf32>
    remat.yield %gw : tensor<10x4xf32>
  } : tensor<10x4xf32>
  return %y, %g : tensor<10x4xf32>, tensor<10x4xf32>
}
