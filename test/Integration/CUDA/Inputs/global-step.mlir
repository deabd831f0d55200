// A step that reads a constant table: the lowering gives the table a device
// copy (gpu.memcpy), so the host never writes device memory.
func.func @step(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %b = tensor.collapse_shape %c [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %m = arith.mulf %a, %bb : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
