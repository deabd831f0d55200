// The step of scan-step.mlir with its loop unrolled and its branch taken
// (the input %n is positive): four tanh layers, then the exp branch.
func.func @step(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>, %n: i64)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = math.tanh %x : tensor<4x8xf32>
  %b = math.tanh %a : tensor<4x8xf32>
  %c = math.tanh %b : tensor<4x8xf32>
  %d = math.tanh %c : tensor<4x8xf32>
  %r = math.exp %d : tensor<4x8xf32>
  %g = remat.backward {
    %e = arith.mulf %dy, %r : tensor<4x8xf32>
    %f = arith.mulf %e, %b : tensor<4x8xf32>
    remat.yield %f : tensor<4x8xf32>
  } : tensor<4x8xf32>
  return %r, %g : tensor<4x8xf32>, tensor<4x8xf32>
}
