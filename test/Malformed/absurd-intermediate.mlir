// RUN: %expect_exit 1 -- remat-opt %s -remat-thread-rng -remat-mark=policy=sqrt -remat-checkpoint -remat-verify -o /dev/null 2>&1 | FileCheck %s
// An absurd tensor made inside the step (a broadcast to 2^44 elements).
// CHECK: {{.*}}absurd-intermediate.mlir:[[@LINE+4]]:{{[0-9]+}}: error: 'tensor.empty' result #0 has the type 'tensor<1048576x16777216xf32>' of more than 2^40 bytes
// CHECK-NOT: Stack dump
func.func @step(%x: tensor<1048576xf32>, %dy: tensor<1048576xf32>) -> (tensor<1048576xf32>, tensor<1048576xf32>) {
  %y = math.tanh %x {remat.segment = 0 : i64} : tensor<1048576xf32>
  %e = tensor.empty() : tensor<1048576x16777216xf32>
  %b = linalg.broadcast ins(%y : tensor<1048576xf32>) outs(%e : tensor<1048576x16777216xf32>) dimensions = [1] {remat.segment = 0 : i64}
  %g = remat.backward {
    %d = arith.mulf %dy, %y : tensor<1048576xf32>
    remat.yield %d : tensor<1048576xf32>
  } : tensor<1048576xf32>
  return %y, %g : tensor<1048576xf32>, tensor<1048576xf32>
}
