// A step whose forward has a dynamically shaped value: no plan can be
// measured. (An input of remat-mark-invalid.mlir, not a test.)
func.func @dynamic(%x: tensor<?xf32>) -> tensor<4xf32> {
  %a = math.tanh %x : tensor<?xf32>
  %g = remat.backward {
    %0 = tensor.cast %a : tensor<?xf32> to tensor<4xf32>
    remat.yield %0 : tensor<4xf32>
  } : tensor<4xf32>
  return %g : tensor<4xf32>
}
